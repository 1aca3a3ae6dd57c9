//! operator-gen's YAML read back by a YAML 1.1 reader (PyYAML) and a YAML 1.2 reader
//! (ruamel.yaml), through `hack/yaml-judges/readback.py`: every string of a generated list —
//! each form a YAML 1.1 or 1.2 reader resolves to another type (booleans, nulls, integers and
//! floats of both versions, sexagesimals, timestamps, `=` and `<<`), strings that start or end
//! with an indicator or whitespace, hold line breaks, control or non-ASCII characters, and
//! look-alikes that are strings to both — written as a mapping's value and as a list item by
//! `codegen::yaml::document`, must come back from both readers as that same string. The test
//! prints how many strings it compared.

use operator_gen_codegen::yaml;
use operator_gen_tests::tools;
use serde_json::{Map, Value};

/// The strings, generated over the forms of each kind.
fn strings() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in [
        "y", "yes", "n", "no", "true", "false", "on", "off", "null", "nil", "none",
    ] {
        let upper = word.to_uppercase();
        let title = format!("{}{}", &upper[..1], &word[1..]);
        let mixed: String = word
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        out.extend([word.to_string(), upper, title, mixed]);
    }
    out.extend(["~", "", "=", "<<", "<<<", "==", ".", "..", "..."].map(String::from));
    for sign in ["", "-", "+"] {
        for n in [
            "0",
            "00",
            "12",
            "0777",
            "0o17",
            "0O17",
            "0x1F",
            "0xff",
            "0X1F",
            "0b101",
            "0B101",
            "1_000",
            "0x_1F",
            "0b1_0",
            "1:20",
            "190:20:30",
            "190:20:30.15",
            "1:60",
            "1.5",
            "0.",
            ".5",
            "1e3",
            "1E3",
            "12e03",
            "1.5E-3",
            "1.5e+3",
            "1_0.5",
            ".inf",
            ".Inf",
            ".INF",
            "inf",
            "6.8523015e+5",
            "1.",
            "1e",
            "e3",
            "1_",
            "_1",
            "0x",
            "0b",
            "09",
            "0o8",
        ] {
            out.push(format!("{sign}{n}"));
        }
    }
    out.extend([".nan", ".NaN", ".NAN", "nan", "NaN"].map(String::from));
    for date in [
        "2001-12-14",
        "2001-1-4",
        "2001-13-45",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2001-12-14T21:59:43Z",
        "2001-12-14T21:59:43",
        "1970-01-01T00:00:00Z",
        "2001-12",
        "12-14",
    ] {
        out.push(date.to_string());
    }
    for t in ["T", "t", " ", " \t"] {
        for zone in ["", "Z", " Z", "+5", "-05:00", " -5"] {
            out.push(format!("1970-1-1{t}0:00:00{zone}"));
            out.push(format!("1970-01-01{t}00:00:00.123{zone}"));
        }
    }
    for indicator in [
        "-", "?", ":", ",", "[", "]", "{", "}", "#", "&", "*", "!", "|", ">", "'", "\"", "%", "@",
        "`", "\\",
    ] {
        out.push(indicator.to_string());
        out.push(format!("{indicator}a"));
        out.push(format!("{indicator} a"));
        out.push(format!("a{indicator}"));
        out.push(format!("a {indicator}"));
        out.push(format!("a{indicator}b"));
        out.push(format!("a {indicator} b"));
    }
    out.extend(
        [
            " a",
            "a ",
            "\ta",
            "a\t",
            "a\nb",
            "a\n",
            "\na",
            "\n",
            "\n\n",
            "a\n\nb",
            "a  b",
            "  ",
            "a\r\nb",
            "a: b",
            "a:b",
            "a #b",
            "a# b",
            "- a",
            "? a",
            "--- a",
            "---",
            "... a",
            "é",
            "日本",
            "\u{85}",
            "\u{2028}",
            "\u{feff}a",
            "\u{7}",
            "a\u{0}b",
            "\u{1b}[0m",
            "v1",
            "1.2.3",
            "forty-two",
            "yess",
            "nope",
            "0.0.0.0",
            "10.0.0.0/8",
            "a=b",
            "rule: self.size() > 0",
            "self.x == 'a'",
            "{lastTransitionTime: 1970-01-01}",
        ]
        .map(String::from),
    );
    out.push("word ".repeat(30));
    out.push(format!("{}\n{}", "long line ".repeat(12), "second line"));
    out
}

#[test]
fn every_string_reads_back_as_itself_in_yaml_1_1_and_1_2() {
    let strings = strings();
    let mut map = Map::new();
    for (i, s) in strings.iter().enumerate() {
        map.insert(format!("k{i:04}"), Value::String(s.clone()));
    }
    map.insert(
        "list".to_string(),
        Value::Array(strings.iter().cloned().map(Value::String).collect()),
    );
    let text = yaml::document(&Value::Object(map));
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("strings.yaml");
    std::fs::write(&file, &text).expect("write");
    let Some((one_one, one_two)) = tools::yaml_readers(&[&file]) else {
        return;
    };
    let mut wrong = Vec::new();
    for (version, docs) in [("1.1", &one_one), ("1.2", &one_two)] {
        let doc = &docs[0];
        for (i, s) in strings.iter().enumerate() {
            let want = Value::String(s.clone());
            for (place, got) in [
                ("value", &doc[format!("k{i:04}")]),
                ("list item", &doc["list"][i]),
            ] {
                if *got != want {
                    wrong.push(format!(
                        "YAML {version} reads the {place} {s:?} back as {got}"
                    ));
                }
            }
        }
    }
    println!(
        "yaml readback: {} strings, each as a value and a list item, read by YAML 1.1 and 1.2 readers",
        strings.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} readings differ:\n{}\nas written:\n{text}",
        wrong.len(),
        strings.len() * 4,
        wrong.join("\n")
    );
}
