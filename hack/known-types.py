#!/usr/bin/env python3
"""Regenerates codegen/src/known/k8s.json: schemas of Kubernetes types as controller-gen emits
them (k8s.io/api v0.36), cut out of the cronjobs conformance golden under ../shared/conformance.
Each type is stored once; nested known types are {"$known": Name} references; types cut from
outside the job template (ObjectReference) keep their own description.
usage: python3 hack/known-types.py"""
import json, os, yaml

here = os.path.dirname(os.path.abspath(__file__))
golden = os.path.join(here, "../../shared/conformance/controller-tools/pkg/crd/testdata/testdata.kubebuilder.io_cronjobs.yaml")
out = os.path.join(here, "../codegen/src/known/k8s.json")

root = yaml.safe_load(open(golden))["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["jobTemplate"]

# type name -> path (property names; "[]" = array items) from the JobTemplateSpec root
P = "spec/template/spec"
C = P + "/containers/[]"
types = {
    "JobTemplateSpec": "",
    "JobSpec": "spec",
    "LabelSelector": "spec/selector",
    "PodTemplateSpec": "spec/template",
    "PodSpec": P,
    "Affinity": P + "/affinity",
    "Toleration": P + "/tolerations/[]",
    "Volume": P + "/volumes/[]",
    "PodSecurityContext": P + "/securityContext",
    "LocalObjectReference": P + "/imagePullSecrets/[]",
    "Container": C,
    "SecurityContext": C + "/securityContext",
    "ResourceRequirements": C + "/resources",
    "EnvVar": C + "/env/[]",
    "EnvFromSource": C + "/envFrom/[]",
    "ContainerPort": C + "/ports/[]",
    "VolumeMount": C + "/volumeMounts/[]",
    "Probe": C + "/livenessProbe",
    "Lifecycle": C + "/lifecycle",
    "SecretKeySelector": C + "/env/[]/valueFrom/secretKeyRef",
    "ConfigMapKeySelector": C + "/env/[]/valueFrom/configMapKeyRef",
    "EnvVarSource": C + "/env/[]/valueFrom",
}

def get(schema, path):
    node = schema
    for part in [p for p in path.split("/") if p]:
        node = node["items"] if part == "[]" else node["properties"][part]
    return node

# cut deepest paths first so every type is stored once
table = {}
order = sorted(types.items(), key=lambda kv: -kv[1].count("/") - (1 if kv[1] else 0))
import copy
work = copy.deepcopy(root)
for name, path in order:
    node = get(work, path)
    schema = {k: v for k, v in node.items() if k != "description"}
    table[name] = copy.deepcopy(schema)
    keep = {"description": node["description"]} if "description" in node else {}
    node.clear()
    node.update(keep)
    node["$known"] = name
# types reached from elsewhere in the golden, stored with their own description (a field's doc
# replaces it; list items keep it)
versions = yaml.safe_load(open(golden))["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
own = {
    "ObjectReference": versions["status"]["properties"]["active"]["items"],
}
for name, node in own.items():
    table[name] = copy.deepcopy(node)
json.dump(table, open(out, "w"), indent=None, sort_keys=True, separators=(",", ":"))
print(out, os.path.getsize(out), "bytes,", len(table), "types")
