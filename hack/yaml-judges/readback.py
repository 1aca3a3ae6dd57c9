"""Reads YAML documents from the files named on the command line with a YAML 1.1 reader (PyYAML's
safe loader) and a YAML 1.2 reader (ruamel.yaml's safe loader), and prints, as one JSON object,
what each made of every document: {"1.1": [doc, ...], "1.2": [doc, ...]}. A value that is not a
string, number, boolean, null, list or mapping (a 1.1 timestamp, say) is written as
{"$type": its Python type name, "$repr": its repr}, so a reader's reading of a scalar as another
type shows; so is a plain `=` or `<<`, YAML 1.1's value and merge keys.

usage: PYTHONPATH=<the judges' directory> python3 readback.py FILE ...
"""
import datetime
import json
import sys

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor


def plain(value):
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return {"$type": "float", "$repr": repr(value)}
        return value
    if isinstance(value, dict):
        return {str(k) if isinstance(k, str) else json.dumps(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return {"$type": type(value).__name__, "$repr": repr(value)}
    return {"$type": type(value).__name__, "$repr": repr(value)}


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader, but a plain `=` or `<<` as a value (YAML 1.1's value and merge keys,
    which the safe loader cannot construct there) read as {"$type": "value" or "merge", "$repr":
    ...} instead of failing the file."""


class Constructor(SafeConstructor):
    """ruamel.yaml's safe constructor, with `=` and `<<` as values read as Loader reads them."""


for key in ("value", "merge"):
    for reader in (Loader, Constructor):
        reader.add_constructor(
            "tag:yaml.org,2002:" + key,
            lambda loader, node, key=key: {"$type": key, "$repr": repr(node.value)},
        )


def main():
    out = {"1.1": [], "1.2": []}
    ruamel = YAML(typ="safe", pure=True)
    ruamel.Constructor = Constructor
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out["1.1"].extend(plain(d) for d in yaml.load_all(text, Loader=Loader))
        out["1.2"].extend(plain(d) for d in ruamel.load_all(text))
    json.dump(out, sys.stdout, sort_keys=True)


main()
