use serde_json::{Value, json};

use super::Validator;

/// A validator whose `spec.f` has the schema `field`.
fn with_field(field: Value) -> Validator {
    let schema = json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {"f": field}},
        },
    });
    Validator::new(
        "example.com",
        "Thing",
        serde_json::from_value(schema).expect("schema"),
    )
}

fn object(f: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"f": f}})
}

/// The causes of refusing `spec.f: bad` as `field: body` lines; empty when admitted.
fn refusal(field: Value, bad: Value) -> Vec<String> {
    match with_field(field).admit(object(bad)) {
        Ok(_) => Vec::new(),
        Err(invalid) => invalid.causes.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn types_and_formats_are_checked_as_the_apiserver_words_them() {
    let skipped = "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";
    assert_eq!(
        refusal(json!({"type": "integer"}), json!(3.5)),
        [
            "spec.f: Invalid value: \"number\": spec.f in body must be of type integer: \"number\"",
            "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in spec.f",
            skipped
        ]
    );
    assert!(refusal(json!({"type": "integer"}), json!(3.0)).is_empty());
    assert!(refusal(json!({"type": "number"}), json!(3)).is_empty());
    assert_eq!(
        refusal(json!({"x-kubernetes-int-or-string": true}), json!(true))[0],
        "spec.f: Invalid value: \"boolean\": spec.f in body must be of type integer,string: \"boolean\""
    );
    assert_eq!(
        refusal(json!({"type": "string", "format": "uuid"}), json!("ahoy"))[0],
        "spec.f: Invalid value: \"ahoy\": spec.f in body must be of type uuid: \"ahoy\""
    );
    for (format, good, bad) in [
        ("date-time", "2024-02-29T10:00:00Z", "2023-02-29T10:00:00Z"),
        ("date", "2024-12-31", "2024-13-01"),
        ("byte", "YWhveQ==", "ahoy!"),
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("duration", "1h30m", "soon"),
        ("k8s-short-name", "my-name", "My-Name"),
        ("made-up", "anything", ""),
    ] {
        let schema = json!({"type": "string", "format": format});
        assert!(
            refusal(schema.clone(), json!(good)).is_empty(),
            "{format} {good}"
        );
        let bad_refused = !refusal(schema, json!(bad)).is_empty();
        assert_eq!(bad_refused, format != "made-up", "{format} {bad}");
    }
}

#[test]
fn bounds_lengths_and_counts_are_checked() {
    let cases = [
        (
            json!({"type": "integer", "minimum": 3}),
            json!(2),
            "spec.f: Invalid value: 2: spec.f in body should be greater than or equal to 3",
        ),
        (
            json!({"type": "integer", "maximum": 3, "exclusiveMaximum": true}),
            json!(3),
            "spec.f: Invalid value: 3: spec.f in body should be less than 3",
        ),
        (
            json!({"type": "integer", "multipleOf": 3}),
            json!(7),
            "spec.f: Invalid value: 7: spec.f in body should be a multiple of 3",
        ),
        (
            json!({"type": "number", "multipleOf": 0.5}),
            json!(1),
            "spec.f: Invalid value: 0: factor MultipleOf declared for spec.f must be positive: 0",
        ),
        (
            json!({"type": "number", "minimum": 1.5}),
            json!(1.2),
            "spec.f: Invalid value: 1.2: spec.f in body should be greater than or equal to 1.5",
        ),
        (
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}),
            json!(true),
            "spec.f: Invalid value: \"boolean\": spec.f in body must be of type integer,string: \"boolean\"",
        ),
        (
            json!({"type": "string", "maxLength": 2}),
            json!("äöü"),
            "spec.f: Too long: may not be more than 2 bytes",
        ),
        (
            json!({"type": "string", "minLength": 2}),
            json!("a"),
            "spec.f: Invalid value: \"a\": spec.f in body should be at least 2 chars long",
        ),
        (
            json!({"type": "string", "pattern": "^a+$"}),
            json!("ab"),
            "spec.f: Invalid value: \"ab\": spec.f in body should match '^a+$'",
        ),
        (
            json!({"type": "string", "enum": ["starboard", "port"]}),
            json!("aft"),
            "spec.f: Unsupported value: \"aft\": supported values: \"port\", \"starboard\"",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 1}),
            json!(["a", "b"]),
            "spec.f: Too many: 2: must have at most 1 item",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
            json!([]),
            "spec.f: Invalid value: 0: spec.f in body should have at least 1 items",
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1}),
            json!({}),
            "spec.f: Invalid value: 0: spec.f in body should have at least 1 properties",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}),
            json!(["a", "a"]),
            "spec.f[1]: Duplicate value: \"a\"",
        ),
        (
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}),
            json!([{"name": "a", "v": 1}, {"name": "a", "v": 2}]),
            "spec.f[1]: Duplicate value: {\"name\":\"a\"}",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            json!({}),
            "spec.f.a: Required value",
        ),
        (
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
            json!({"apiVersion": "v1"}),
            "spec.f.kind: Required value",
        ),
        (
            json!({"type": "array", "items": {"type": "integer", "maximum": 1}}),
            json!([1, 2]),
            "spec.f[1]: Invalid value: 2: spec.f[1] in body should be less than or equal to 1",
        ),
    ];
    for (schema, bad, says) in cases {
        let got = refusal(schema.clone(), bad.clone());
        assert_eq!(
            got.first().map(String::as_str),
            Some(says),
            "{schema} with {bad}: {got:?}"
        );
    }
}

#[test]
fn unknown_fields_are_pruned_nulls_dropped_and_defaults_set() {
    let v = with_field(json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "default": "ahoy"},
            "n": {"type": "string", "nullable": true},
            "d": {"type": "string"},
            "inner": {"type": "object", "default": {}, "properties": {"x": {"type": "integer", "default": 7}}},
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        },
    }));
    let stored = v
        .admit(object(
            json!({"n": null, "d": null, "z": 1, "open": {"any": [1]}}),
        ))
        .expect("admitted");
    assert_eq!(
        stored["spec"]["f"],
        json!({"n": null, "open": {"any": [1]}, "a": "ahoy", "inner": {"x": 7}})
    );
    assert_eq!(stored["metadata"], json!({"name": "t"}));
}

fn rule(rule: Value) -> Validator {
    with_field(json!({"type": "integer", "x-kubernetes-validations": [rule]}))
}

#[test]
fn cel_rules_give_their_message_reason_and_field_path() {
    let even = rule(json!({"rule": "self % 2 == 0", "message": "must be even"}));
    let refused = even.admit(object(json!(3))).expect_err("odd");
    assert_eq!(
        refused.causes[0].to_string(),
        "spec.f: Invalid value: 3: must be even"
    );
    assert!(even.admit(object(json!(4))).is_ok());

    let expression = rule(
        json!({"rule": "self < 10", "messageExpression": "'too big: ' + string(self)", "reason": "FieldValueForbidden"}),
    );
    let refused = expression.admit(object(json!(12))).expect_err("big");
    assert_eq!(
        refused.causes[0].to_string(),
        "spec.f: Forbidden: too big: 12"
    );
    assert_eq!(
        refused.status()["details"]["causes"][0]["reason"],
        "FieldValueForbidden"
    );

    let v = with_field(json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}, "s": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "!has(self.s) || self.s.startsWith('x') && self.s.matches('^x[a-z]+$')", "fieldPath": ".s"},
            {"rule": "!has(self.a) || self.a.isSorted() && self.a.sum() < 10 && self.a.all(i, i > 0)"},
        ],
    }));
    let refused = v
        .admit(object(json!({"s": "xY", "a": [2, 1]})))
        .expect_err("both fail");
    let got: Vec<String> = refused.causes.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            "spec.f.s: Invalid value: failed rule: !has(self.s) || self.s.startsWith('x') && self.s.matches('^x[a-z]+$')",
            "spec.f: Invalid value: failed rule: !has(self.a) || self.a.isSorted() && self.a.sum() < 10 && self.a.all(i, i > 0)",
        ]
    );
    assert!(v.admit(object(json!({"s": "xy", "a": [1, 2]}))).is_ok());
}

#[test]
fn a_rule_that_fails_to_evaluate_says_why() {
    let v = with_field(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.a > 1"}, {"rule": "10 / self.b > 1"}],
    }));
    let refused = v.admit(object(json!({"b": 0}))).expect_err("no a, b zero");
    let got: Vec<String> = refused.causes.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            "spec.f: Invalid value: \"object\": no such key: a evaluating rule: self.a > 1",
            "spec.f: Invalid value: \"object\": division by zero evaluating rule: 10 / self.b > 1",
        ]
    );
}

#[test]
fn transition_rules_see_the_old_value_on_update() {
    let grow = rule(json!({"rule": "self >= oldSelf", "message": "must not shrink"}));
    assert!(
        grow.admit(object(json!(1))).is_ok(),
        "no old value on create"
    );
    let old = grow.admit(object(json!(2))).expect("created");
    let refused = grow
        .admit_update(object(json!(1)), &old)
        .expect_err("shrinks");
    assert_eq!(
        refused.message(),
        "Thing.example.com \"t\" is invalid: spec.f: Invalid value: 1: must not shrink"
    );
    assert!(grow.admit_update(object(json!(3)), &old).is_ok());

    let once = rule(
        json!({"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "once set"}),
    );
    assert!(once.admit(object(json!(1))).is_ok());
    assert!(once.admit_update(object(json!(1)), &old).is_err());
}

#[test]
fn unchanged_invalid_values_are_ratcheted_on_update() {
    let v = with_field(json!({"type": "integer", "maximum": 3}));
    let old = object(json!(5));
    assert!(v.admit_update(object(json!(5)), &old).is_ok());
    assert!(v.admit_update(object(json!(6)), &old).is_err());
}

#[test]
fn kubernetes_string_checks_read_as_kubernetes_reads() {
    let holds = |rule: &str, value: &str| {
        let v = with_field(json!({"type": "string", "x-kubernetes-validations": [{"rule": rule}]}));
        v.admit(object(json!(value))).is_ok()
    };
    for (rule, good, bad) in [
        ("isURL(self)", "https://example.com/x", "example.com"),
        ("isIP(self)", "10.0.0.1", "::ffff:10.0.0.1"),
        ("isCIDR(self)", "2001:db8::/32", "10.0.0.0/08"),
        ("isQuantity(self)", "1.5Gi", "1Gb"),
    ] {
        assert!(holds(rule, good), "{rule} refuses {good}");
        assert!(!holds(rule, bad), "{rule} admits {bad}");
    }
}
