//! The fake API admits custom resources as the apiserver does. Every proof of the marker
//! registry that writes an object (`codegen/src/markers/registry.rs`: each marker that changes
//! validation with an object it admits and one it refuses, the transition rules with an update
//! each way) becomes cases, run through `FakeApi` and through a real kube-apiserver in the same
//! test, each with the fixture's CRD: the verdicts, the causes' field paths and reasons, the
//! messages, and what is stored must be equal. Proofs of other kinds, and the apiserver's
//! behaviours the fake leaves out, are in [`NOT_COMPARED`], with the reason. A second table, [`schema_cases`], reaches what no marker writes (every
//! string format the apiserver checks, `messageExpression`, `reason`, `fieldPath`, maps, nested
//! defaults, CEL list and string functions) with a CRD of its own, compared the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use operator_gen_codegen::markers::fixture::{self, Placed};
use operator_gen_codegen::markers::registry::{ABSENT, Case};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::fake::FakeApi;
use serde_json::{Value, json};

use super::apiserver_markers::fixture_crds;

/// What is not compared, and why: the kinds of proofs that write no object to admit (a
/// one-word kind), and the apiserver's behaviours the fake leaves out (a phrase).
const NOT_COMPARED: &[(&str, &str)] = &[
    (
        "CEL cost limits",
        "the apiserver refuses a CRD whose rules' estimated cost is over budget (per rule, per messageExpression, per schema), and an object whose rules run out of the runtime budget (per expression, per object); the fake validates no CRD and counts no cost, so it evaluates every rule, whatever its cost",
    ),
    (
        "CEL rules the apiserver refuses in a CRD",
        "the 1.37 apiserver checks rules against CEL as of its compatibility version 1.36: it refuses the lists `includes`, the strings `reverse`, and a literal format string whose clauses do not fit its literal list of arguments; the fake validates no CRD: it has neither function, and reports such a format when the rule runs",
    ),
    (
        "CEL durations and timestamps",
        "the fake's `cel` crate is built without its `chrono` feature: `duration()` is undeclared there, an error when the rule runs",
    ),
    (
        "CEL sum of an empty list",
        "the apiserver's `sum()` of an empty list is the zero of the items' type (`0.0` for numbers); the fake's is the int `0`, as its list values do not carry their items' type",
    ),
    (
        "CEL errors on both sides of ||",
        "when both operands fail, the apiserver reports the left one's error, the fake (the `cel` crate) the right one's; a rule with one failing operand is compared",
    ),
    (
        "CEL error wording beyond the compared values",
        "the fake words IP, CIDR, URL, quantity and semver errors as the apiserver does for the values compared here; a regex that Rust's regex crate reads otherwise than Go (the fake accepts `a**` and `a{1001}`, and its `\\d`, `\\w`, `\\s` and `\\b` are Unicode, Go's ASCII) or refuses with another error than an unclosed class or group, an unopened group, a repetition without argument, a bad escape, class range or repeat range, or a trailing backslash, a quantity beyond 10^29 (which the fake refuses), a `%f` or `%e` precision over 10000 (which the fake refuses as over budget), and `%f` of a huge double (1e100, which the apiserver writes with all the digits of its binary value) are worded otherwise",
    ),
    (
        "Merges",
        "field ownership under server-side apply, not admission: the fake's apply is compared in fake_client's behaviour table",
    ),
    (
        "Kept",
        "documentation markers: what the apiserver stores of the CRD, not of an object",
    ),
    (
        "RefusesCrd",
        "the apiserver refuses the CRD itself; the fake does not validate CRDs",
    ),
    (
        "Column",
        "printer columns (Table output), which the fake does not serve",
    ),
    (
        "Scale",
        "the scale subresource, which the fake does not serve",
    ),
    (
        "StatusIgnored",
        "the status subresource, compared in fake_client's behaviour table",
    ),
];

/// One case: create `create`, then, for an update, merge-patch the slot to `update`.
struct Compared {
    name: String,
    slot: String,
    create: Option<Value>,
    update: Option<Option<Value>>,
}

/// What a case saw: the stored slot, or the refusal's causes (field, reason) and message.
#[derive(Debug, PartialEq)]
enum Seen {
    Admitted(Option<Value>),
    Refused {
        causes: Vec<(String, String)>,
        message: String,
    },
    Failed(String),
}

fn value(json: &str) -> Option<Value> {
    (json != ABSENT).then(|| serde_json::from_str(json).expect("a proof's value is JSON"))
}

/// The cases of one proof; `None` for a proof of a kind in [`NOT_COMPARED`].
fn cases_of(p: &Placed) -> Option<Vec<Compared>> {
    let slot = p.slot_name();
    let marker = p.kind.name();
    let case = |name: String, create: &str, update: Option<&str>| Compared {
        name: format!("{marker} (slot {}): {name}", p.slot),
        slot: slot.clone(),
        create: value(create),
        update: update.map(value),
    };
    Some(match p.proof.case {
        Case::Rejects { ok, bad, .. } => vec![
            case(format!("admits {ok}"), ok, None),
            case(format!("refuses {bad}"), bad, None),
        ],
        Case::RejectsUpdate { ok, bad, .. } => vec![
            case(format!("admits {ok}"), ok, None),
            case(format!("admits the update {ok} to {ok}"), ok, Some(ok)),
            case(format!("refuses the update {ok} to {bad}"), ok, Some(bad)),
        ],
        Case::Stores { given, .. } => vec![case(format!("stores {given}"), given, None)],
        _ => return None,
    })
}

fn object(kind: &ApiResource, slot: &str, name: &str, field: &Option<Value>) -> DynamicObject {
    let mut inner = serde_json::Map::new();
    if let Some(v) = field {
        inner.insert("f".into(), v.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name},
        "spec": {slot: inner},
    }))
    .expect("object")
}

fn seen(result: kube::Result<DynamicObject>, slot: &str) -> Seen {
    match result {
        Ok(o) => Seen::Admitted(o.data["spec"][slot].get("f").cloned()),
        Err(kube::Error::Api(status)) if status.code == 422 => {
            let mut causes: Vec<(String, String)> = status
                .details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.field, c.reason))
                .collect();
            causes.sort();
            Seen::Refused {
                causes,
                message: status.message,
            }
        }
        Err(e) => Seen::Failed(e.to_string()),
    }
}

async fn run(api: &Api<DynamicObject>, kind: &ApiResource, n: usize, case: &Compared) -> Seen {
    let name = format!("c{n}");
    let created = api
        .create(
            &PostParams::default(),
            &object(kind, &case.slot, &name, &case.create),
        )
        .await;
    let Some(update) = &case.update else {
        return seen(created, &case.slot);
    };
    if let Err(e) = created {
        return Seen::Failed(format!("the object to update is not created: {e}"));
    }
    let patch = json!({"spec": {&case.slot: {"f": update}}});
    let patched = api
        .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
        .await;
    seen(patched, &case.slot)
}

fn resource(group: &str, kind: &str) -> ApiResource {
    let mut resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, "v1", kind));
    resource.plural = format!("{}s", kind.to_lowercase());
    resource
}

/// The group and kind of the second table's CRD.
const SCHEMA_GROUP: &str = "admission.operator-gen.dev";
const SCHEMA_KIND: &str = "Admission";

/// The string formats of the second table: a slot, the format and values to create, each
/// admitted or refused as the apiserver decides.
const FORMATS: &[(&str, &str, &[&str])] = &[
    (
        "datetime",
        "date-time",
        &["2024-02-29T10:00:00Z", "2023-02-29T10:00:00Z", "yesterday"],
    ),
    ("byte", "byte", &["YWhveQ==", "ahoy!"]),
    ("ipv4", "ipv4", &["10.0.0.1", "10.0.0.256"]),
    ("cidr", "cidr", &["10.0.0.0/8", "10.0.0.0/33"]),
    ("duration", "duration", &["1h30m", "soon"]),
    ("shortname", "k8s-short-name", &["my-name", "My-Name"]),
    ("hostname", "hostname", &["example.com", "-bad-.com"]),
    (
        "uri",
        "uri",
        &[
            "https://example.com/a?b=c",
            "/absolute/path",
            "relative/path",
            "http://exa mple.com",
            "http://a.com:abc/",
            "http://[::1/x",
            "http://%41.com/",
            "http://a.com/%zz",
        ],
    ),
    (
        "email",
        "email",
        &[
            "a@b.example",
            "Ann <ann@example.com>",
            "not an email",
            "@example.com",
        ],
    ),
    (
        "mac",
        "mac",
        &[
            "00:1a:2b:3c:4d:5e",
            "00-1a-2b-3c-4d-5e",
            "0000.5e00.5301",
            "00:1a:2b:3c:4d",
        ],
    ),
    (
        "uuidthree",
        "uuid3",
        &[
            "a3bb189e-8bf9-3888-9912-ace4e6543002",
            "a3bb189e-8bf9-4888-9912-ace4e6543002",
        ],
    ),
    (
        "uuidfour",
        "uuid4",
        &[
            "123e4567-e89b-42d3-a456-426614174000",
            "123e4567-e89b-42d3-7456-426614174000",
        ],
    ),
    (
        "isbn",
        "isbn",
        &["0321751043", "978-0321751041", "0321751044"],
    ),
    (
        "creditcard",
        "creditcard",
        &[
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111111111111112",
        ],
    ),
    ("ssn", "ssn", &["123-45-6789", "123456789", "12-345-6789"]),
    ("hexcolor", "hexcolor", &["#fff", "00FF00", "#ggg"]),
    ("rgbcolor", "rgbcolor", &["rgb(255,0, 10)", "rgb(256,0,0)"]),
    (
        "bson",
        "bsonobjectid",
        &["507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901"],
    ),
    (
        "ipvsix",
        "ipv6",
        &[
            "::1",
            "2001:db8::1",
            "::ffff:10.0.0.1",
            "10.0.0.1",
            "2001:db8::g",
        ],
    ),
    ("date", "date", &["2024-02-29", "2023-02-29", "2024-2-1"]),
    ("longname", "k8s-long-name", &["a.b-c.d", "a..b", "-a.b"]),
    ("password", "password", &["anything at all"]),
    (
        "days",
        "duration",
        &["3 days", "2h", "1.5h", "3 fortnights", "10"],
    ),
    (
        "datetimes",
        "date-time",
        &[
            "2024-02-29T10:00:00.123+02:00",
            "2024-02-29T10:00:00",
            "2024-02-29 10:00:00Z",
            "2024-02-29t10:00:00z",
        ],
    ),
    ("ipfour", "ipv4", &["010.0.0.1", "1.2.3", "::ffff:10.0.0.1"]),
    (
        "cidrsix",
        "cidr",
        &["2001:db8::/32", "2001:db8::/129", "10.0.0.1/32"],
    ),
];

/// Kubernetes' CEL checks of strings in the second table: a slot, the function (a rule
/// `<function>(self)`) and values to create.
const STRING_CHECKS: &[(&str, &str, &[&str])] = &[
    (
        "isurl",
        "isURL",
        &[
            "https://example.com/x",
            "/path",
            "example.com",
            "http://exa mple.com",
        ],
    ),
    (
        "isip",
        "isIP",
        &[
            "10.0.0.1",
            "::1",
            "010.0.0.1",
            "::ffff:10.0.0.1",
            "fe80::1%eth0",
            "10.0.0",
        ],
    ),
    (
        "iscidr",
        "isCIDR",
        &[
            "10.0.0.0/8",
            "10.0.0.1/8",
            "2001:db8::/32",
            "10.0.0.0/33",
            "10.0.0.0/08",
            "10.0.0.0",
        ],
    ),
    (
        "isquantity",
        "isQuantity",
        &[
            "1Gi", "500m", "1.5", "1e3", "-2k", "1 Gi", "Gi", "1Gb", ".5", "+", "1e", "1e+3",
        ],
    ),
];

/// A row of the second table: a slot, the schema of its field `f`, and the values it is
/// created with and, for an update, patched to.
type SchemaCase = (&'static str, Value, Vec<(Value, Option<Value>)>);

/// The second table.
fn schema_cases() -> Vec<SchemaCase> {
    let int = |rule: Value| json!({"type": "integer", "x-kubernetes-validations": [rule]});
    let one = |v: Value| (v, None);
    let mut cases = vec![
        (
            "int32",
            json!({"type": "integer", "format": "int32"}),
            vec![one(json!(2147483647)), one(json!(2147483648_i64))],
        ),
        (
            "chars",
            json!({"type": "string", "maxLength": 3}),
            vec![one(json!("äöü")), one(json!("äöüß"))],
        ),
        (
            "intenum",
            json!({"type": "integer", "enum": [1, 2]}),
            vec![one(json!(2)), one(json!(3))],
        ),
        (
            "halves",
            json!({"type": "number", "multipleOf": 0.5, "minimum": 1.5}),
            vec![one(json!(1.5)), one(json!(2.2)), one(json!(1))],
        ),
        (
            "counts",
            json!({"type": "object", "additionalProperties": {"type": "integer", "maximum": 3}}),
            vec![one(json!({"k": 3})), one(json!({"k": 4}))],
        ),
        (
            "nested",
            json!({"type": "object", "default": {}, "properties": {"x": {"type": "integer", "default": 7}, "y": {"type": "string"}}}),
            vec![one(json!({"y": null, "z": 1}))],
        ),
        (
            "nullitems",
            json!({"type": "array", "items": {"type": "string", "nullable": true}}),
            vec![one(json!(["a", null]))],
        ),
        (
            "items",
            json!({"type": "array", "items": {"type": "string"}}),
            vec![one(json!(["a", null]))],
        ),
        (
            "keyed",
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "v": {"type": "string", "maxLength": 2}}}}),
            vec![
                one(json!([{"name": "a", "v": "ok"}])),
                one(json!([{"name": "a", "v": "long"}])),
            ],
        ),
        (
            "embedded",
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
            vec![
                one(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
                one(json!({"apiVersion": "v1", "kind": ""})),
            ],
        ),
        (
            "msgexpr",
            int(
                json!({"rule": "self < 10", "messageExpression": "self > 100 ? 'far too big' : 'too big'", "reason": "FieldValueForbidden"}),
            ),
            vec![one(json!(3)), one(json!(12))],
        ),
        (
            "fieldpath",
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "!has(self.a) || self.a != 'x'", "fieldPath": ".a", "message": "a must not be x"}]}),
            vec![one(json!({"a": "y"})), one(json!({"a": "x"}))],
        ),
        (
            "needed",
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "has(self.a)", "reason": "FieldValueRequired", "message": "a is needed"}]}),
            vec![one(json!({}))],
        ),
        (
            "sorted",
            json!({"type": "array", "maxItems": 4, "items": {"type": "integer"}, "x-kubernetes-validations": [{"rule": "self.isSorted() && self.sum() < 10 && self.all(x, x > 0)", "message": "sorted, small and positive"}]}),
            vec![one(json!([1, 2])), one(json!([2, 1])), one(json!([5, 6]))],
        ),
        (
            "lower",
            json!({"type": "string", "maxLength": 8, "x-kubernetes-validations": [{"rule": "self.lowerAscii() == self && self.matches('^[a-z]+$')"}]}),
            vec![one(json!("abc")), one(json!("Abc"))],
        ),
        (
            "once",
            int(
                json!({"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true, "message": "must not shrink"}),
            ),
            vec![
                one(json!(5)),
                (json!(5), Some(json!(6))),
                (json!(5), Some(json!(4))),
            ],
        ),
        (
            "failing",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.a > 1"}, {"rule": "10 / self.b > 1"}]}),
            vec![one(json!({"a": 2, "b": 1})), one(json!({"b": 0}))],
        ),
        (
            "ratchet",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "maximum": 3}}}),
            vec![(json!({"a": 1, "b": 3}), Some(json!({"a": 2, "b": 4})))],
        ),
    ];
    let strings = |values: &[&str]| values.iter().map(|v| one(json!(v))).collect();
    for (slot, schema, values) in cel_library_cases() {
        cases.push((slot, schema, values.into_iter().map(one).collect()));
    }
    for (slot, format, values) in FORMATS {
        let schema = json!({"type": "string", "format": format});
        cases.push((*slot, schema, strings(values)));
    }
    for (slot, function, values) in STRING_CHECKS {
        let rule = format!("{function}(self)");
        let schema = json!({"type": "string", "maxLength": 32, "x-kubernetes-validations": [{"rule": rule}]});
        cases.push((*slot, schema, strings(values)));
    }
    cases
}

/// A schema of `base` (a type and its bounds) with one rule whose `messageExpression` shows
/// what the functions under test computed.
fn shown(mut base: Value, rule: &str, message: &str) -> Value {
    base["x-kubernetes-validations"] = json!([{"rule": rule, "messageExpression": message}]);
    base
}

/// Kubernetes' CEL libraries in the second table: a slot, its schema, and the values to create.
/// Each rule's `messageExpression` formats what the functions computed, so a refusal's
/// message compares their results; a value a function refuses compares its error.
fn cel_library_cases() -> Vec<(&'static str, Value, Vec<Value>)> {
    let text = |n: u32| json!({"type": "string", "maxLength": n});
    let ints = json!({"type": "array", "maxItems": 4, "items": {"type": "integer"}});
    vec![
        (
            "listindex",
            shown(
                ints.clone(),
                "self.indexOf(2) == self.lastIndexOf(2)",
                "'first %d, last %d'.format([self.indexOf(2), self.lastIndexOf(2)])",
            ),
            vec![json!([1, 2, 3]), json!([2, 1, 2]), json!([])],
        ),
        (
            "listminmax",
            shown(
                ints.clone(),
                "self.min() >= 0 && self.isSorted()",
                "'min %d, max %d, sum %d, sorted %s'.format([self.min(), self.max(), self.sum(), self.isSorted()])",
            ),
            vec![json!([1, 2, 3]), json!([3, -1, 2]), json!([])],
        ),
        (
            "listdoubles",
            shown(
                json!({"type": "array", "maxItems": 4, "items": {"type": "number"}}),
                "self.sum() < 10.0",
                "'sum %s, max %s'.format([self.sum(), self.max()])",
            ),
            vec![json!([1.5, 2.5]), json!([9.5, 1])],
        ),
        (
            "liststrings",
            shown(
                json!({"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 4}}),
                "self.isSorted()",
                "'min %s, max %s, index %d, joined %s %s'.format([self.min(), self.max(), self.indexOf('b'), self.join('-'), self.join()])",
            ),
            vec![json!(["a", "b"]), json!(["c", "b", "a"])],
        ),
        (
            "strfuncs",
            shown(
                text(12),
                "self.trim().lowerAscii() == 'abc'",
                "'%s|%s|%d|%d|%s|%s|%s|%s|%d|%d'.format([self.upperAscii(), self.replace('b', 'x'), self.indexOf('b'), self.lastIndexOf('b'), self.substring(1), self.charAt(0), self.split('b'), strings.quote(self), self.indexOf('b', 2), self.lastIndexOf('b', 1)])",
            ),
            vec![json!(" ABC "), json!("abba\""), json!("b")],
        ),
        (
            "strerrs",
            shown(text(12), "self.charAt(4) != 'x'", "'no'"),
            vec![json!("abcdef"), json!("abc")],
        ),
        (
            "substrerrs",
            shown(text(12), "self.substring(3, 2) == ''", "'no'"),
            vec![json!("abcd")],
        ),
        (
            "indexerrs",
            shown(text(12), "self.indexOf('a', -1) == 0", "'no'"),
            vec![json!("abcd")],
        ),
        (
            "stroffsets",
            shown(
                text(12),
                "self.indexOf('a', 9) == -1 && self.lastIndexOf('a', 9) == -1",
                "'%d %d %d %s'.format([self.indexOf('a', 9), self.lastIndexOf('a', 9), self.indexOf('', 9), self.charAt(size(self))])",
            ),
            vec![json!("abc"), json!(""), json!("aaaaaaaaaaaa")],
        ),
        (
            "formats",
            shown(
                text(40),
                "self.format([1, 'a', 1.5, [1, 'a'], true, null, 2u, 255]) == 'ok'",
                "self.format([1, 'a', 1.5, [1, 'a'], true, null, 2u, 255])",
            ),
            vec![
                json!("ok"),
                json!("%d|%s|%.2f|%s|%s|%s|%d|%x"),
                json!("%d %s %e %s %s %s %d %X"),
                json!("%d %s %f %s %s %s %o %b"),
                json!("100%% %s"),
                json!("%f"),
                json!("%q"),
                json!("%"),
                json!("%5d"),
                json!("%s%s%s%s%s%s%s%s%s"),
            ],
        ),
        (
            "formatvalues",
            shown(
                text(40),
                "self.format([{'k': 2, 'a': 'x'}, b'hi', 1234567.891, 1e9, 0.000012, -0.0, [1.5, b'y', null, ['z']], 99.995, -1234.5]) == 'ok'",
                "self.format([{'k': 2, 'a': 'x'}, b'hi', 1234567.891, 1e9, 0.000012, -0.0, [1.5, b'y', null, ['z']], 99.995, -1234.5])",
            ),
            vec![
                json!("%s|%s|%s|%s|%s|%s|%s"),
                json!("%s|%X|%f|%.2f|%.0f|%f"),
                json!("%s|%s|%e|%e|%e|%.2e"),
                json!("%s|%s|%s|%s|%s|%s|%s|%.2f|%.1f"),
                json!("%.3f %e"),
                json!("%x"),
                json!("%.2"),
            ],
        ),
        (
            "formatspecial",
            shown(
                text(24),
                "self.format([double('NaN'), double('Infinity'), double('-Infinity'), 'NaN', -0.0]) == 'ok'",
                "self.format([double('NaN'), double('Infinity'), double('-Infinity'), 'NaN', -0.0])",
            ),
            vec![
                json!("%f|%f|%f|%f|%f"),
                json!("%e|%e|%e|%e|%e"),
                json!("%s|%s|%s|%s|%s"),
                json!("%.2f|%.1e"),
            ],
        ),
        (
            "formatquote",
            shown(
                text(8),
                r#"self.format([['q\"', 't\t', 'b\x07', 'n\x01', 'é\\'], b'\x01']) == 'ok'"#,
                r#"self.format([['q\"', 't\t', 'b\x07', 'n\x01', 'é\\'], b'\x01'])"#,
            ),
            vec![json!("%s %s")],
        ),
        (
            "findre",
            shown(
                text(12),
                "self.find('[0-9]+') != ''",
                "'found %s, all %s, two %s'.format([self.find('[a-z]+'), self.findAll('[a-z]'), self.findAll('[a-z]', 2)])",
            ),
            vec![json!("ab12"), json!("abc"), json!("")],
        ),
        (
            "findbad",
            shown(text(8), "'a[b'.find(self) != 'zz'", "'no'"),
            vec![
                json!("b"),
                json!("["),
                json!("(a"),
                json!("a)"),
                json!("[a[b"),
                json!("a|*"),
                json!("[z-a]"),
                json!("a{2,1}"),
                json!("\\q"),
                json!("x\\"),
            ],
        ),
        (
            "sets",
            shown(
                ints.clone(),
                "sets.contains(self, [1, 2])",
                "'equivalent %s, intersects %s, contained %s'.format([sets.equivalent(self, [1, 2]), sets.intersects(self, [3]), sets.contains([1, 2, 3, 4], self)])",
            ),
            vec![json!([2, 1]), json!([1, 2, 1]), json!([1, 3]), json!([])],
        ),
        (
            "urls",
            shown(
                text(64),
                "url(self).getScheme() == 'https'",
                "'%s|%s|%s|%s|%s|%s|%d'.format([url(self).getScheme(), url(self).getHost(), url(self).getHostname(), url(self).getPort(), url(self).getEscapedPath(), 'a' in url(self).getQuery() ? url(self).getQuery()['a'] : ['none'], size(url(self).getQuery())])",
            ),
            vec![
                json!("https://example.com/x"),
                json!("HTTP://user@Example.com:8080/p/a%2Fb?a=1&a=2&c=%41#frag"),
                json!("http://[::1]:80/a b?a=x+y&b"),
                json!("/just/a/path?a=1;b=2"),
                json!("mailto:someone@example.com"),
                json!("ftp://host/%7Euser/"),
                json!("x"),
                json!(":x"),
                json!("http://exa mple.com"),
                json!("http://a.com/%zz"),
                json!("http://a.com:abc/"),
                json!("http://a.com:/x"),
                json!("//a.com/x?a=1"),
                json!("///x"),
                json!("http://[::1/x"),
                json!("http://%41.com/"),
                json!("http://a.com?a=%zz&b=1&a=3"),
                json!("HTTPS://a.com/%7e%41"),
                json!("http://a.com/a(b)[c]"),
                json!("http://a.com/a b(c)"),
                json!("http://u:p@a.com:8080"),
                json!("*"),
            ],
        ),
        (
            "ips",
            shown(
                text(40),
                "ip(self).isLoopback()",
                "'%s|%d|%s|%s|%s|%s|%s|%s'.format([string(ip(self)), ip(self).family(), ip(self).isUnspecified(), ip(self).isLinkLocalMulticast(), ip(self).isLinkLocalUnicast(), ip(self).isGlobalUnicast(), ip.isCanonical(self), ip(self) == ip('10.0.0.1')])",
            ),
            vec![
                json!("127.0.0.1"),
                json!("::1"),
                json!("10.0.0.1"),
                json!("0.0.0.0"),
                json!("::"),
                json!("224.0.0.1"),
                json!("ff02::1"),
                json!("169.254.1.1"),
                json!("fe80::1"),
                json!("255.255.255.255"),
                json!("2001:DB8:0:0:0::1"),
                json!("10.0.0.256"),
                json!("10.0.0"),
                json!("10.0.0.1.2"),
                json!("010.0.0.1"),
                json!("10..0.1"),
                json!("10.0.0.x"),
                json!("fe80::1%eth0"),
                json!("::ffff:10.0.0.1"),
                json!("abc"),
                json!("2001:db8::g"),
                json!("1:2:3:4:5:6:7"),
                json!("1::2::3"),
                json!("12345::1"),
                json!("1:2:3:4:5:6:7::8"),
                json!("1:2:3:4:5:6:7:8:9"),
                json!("1:2:3:4:5:6:1.2.3.4"),
                json!("1:2:3:4:5:1.2.3.4"),
                json!("::1.2.3"),
                json!("::1.2.3.04"),
                json!("fe80::1%"),
                json!("1:"),
                json!(":1"),
            ],
        ),
        (
            "cidrs",
            shown(
                text(48),
                "cidr(self).containsIP('10.1.2.3')",
                "'%s|%s|%d|%s|%s|%s|%s|%s'.format([string(cidr(self)), string(cidr(self).ip()), cidr(self).prefixLength(), string(cidr(self).masked()), cidr(self).containsIP(ip('192.168.1.1')), cidr(self).containsCIDR('10.1.0.0/16'), cidr(self).containsCIDR(cidr('2001:db8::/48')), cidr(self) == cidr('10.0.0.0/8')])",
            ),
            vec![
                json!("10.0.0.0/8"),
                json!("10.1.2.3/16"),
                json!("192.168.0.0/16"),
                json!("2001:db8::1/32"),
                json!("0.0.0.0/0"),
                json!("10.0.0.0/33"),
                json!("10.0.0.0/08"),
                json!("10.0.0.0"),
                json!("::ffff:10.0.0.0/104"),
                json!("10.0.0.256/8"),
                json!("10.0.0.0/x"),
            ],
        ),
        (
            "cidrarg",
            shown(
                text(24),
                "cidr('10.0.0.0/8').containsIP(self) || cidr('10.0.0.0/8').containsCIDR(self)",
                "'no'",
            ),
            vec![
                json!("10.0.0.1"),
                json!("10.0.0.0/9"),
                json!("10.0.0"),
                json!("10.0.0.0/99"),
            ],
        ),
        (
            "quantities",
            shown(
                text(16),
                "quantity(self).isLessThan(quantity('1k'))",
                "'%s|%s|%d|%d|%s|%s|%s|%s'.format([quantity(self).isInteger(), quantity(self).asApproximateFloat(), sign(quantity(self)), quantity(self).compareTo(quantity('1500m')), quantity(self).isGreaterThan(quantity('1Ki')), quantity(self).add(quantity('500m')).asApproximateFloat(), quantity(self).sub(1).asApproximateFloat(), quantity(self).add(2) == quantity('1502')])",
            ),
            vec![
                json!("500m"),
                json!("1500"),
                json!("1.5k"),
                json!("2Ki"),
                json!("-1.5k"),
                json!("1e3"),
                json!("0.5"),
                json!("1Gb"),
                json!("1KK"),
                json!("1e"),
                json!(""),
                json!("1.2.3"),
            ],
        ),
        (
            "quantityint",
            shown(
                text(16),
                "quantity(self).asInteger() < 10",
                "'%d'.format([quantity(self).asInteger()])",
            ),
            vec![
                json!("9"),
                json!("12"),
                json!("1.5"),
                json!("100m"),
                json!("1k"),
            ],
        ),
        (
            "semvers",
            shown(
                text(24),
                "semver(self).isGreaterThan(semver('1.0.0'))",
                "'%d.%d.%d|%d|%s|%s'.format([semver(self).major(), semver(self).minor(), semver(self).patch(), semver(self).compareTo(semver('1.2.3-alpha')), semver(self).isLessThan(semver('1.2.3')), semver(self) == semver('1.2.3+build')])",
            ),
            vec![
                json!("1.2.3"),
                json!("0.9.0"),
                json!("1.2.3-alpha.1"),
                json!("1.2.3-1"),
                json!("1.2.3-alpha"),
                json!("1.2.3+meta"),
                json!("1.2"),
                json!("01.2.3"),
                json!("1.2.x"),
                json!("1.2.3-01"),
                json!("1.2.3+"),
                json!("v1.2.3"),
                json!(""),
            ],
        ),
        (
            "semvernorm",
            shown(
                text(24),
                "isSemver(self, true) && semver(self, true).major() >= 1",
                "'%s|%s|%s'.format([isSemver(self), isSemver(self, true), string(semver(self, true).major())])",
            ),
            vec![
                json!("v1.2"),
                json!("1.02.3"),
                json!("0.1"),
                json!("v1.2-beta"),
            ],
        ),
    ]
}

/// The second table's CRD: each slot of [`schema_cases`] an object whose `f` has its schema.
fn schema_crd() -> CustomResourceDefinition {
    let slots: serde_json::Map<String, Value> = schema_cases()
        .into_iter()
        .map(|(slot, schema, _)| {
            let slot_schema = json!({"type": "object", "properties": {"f": schema}});
            (slot.to_owned(), slot_schema)
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("admissions.{SCHEMA_GROUP}")},
        "spec": {
            "group": SCHEMA_GROUP, "scope": "Namespaced",
            "names": {"plural": "admissions", "singular": "admission", "kind": SCHEMA_KIND, "listKind": "AdmissionList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": slots}},
            }}}],
        },
    }))
    .expect("the second table's CRD")
}

/// The second table as cases.
fn schema_compared() -> Vec<Compared> {
    let mut out = Vec::new();
    for (slot, _, values) in schema_cases() {
        for (create, update) in values {
            let name = match &update {
                None => format!("{slot}: create {create}"),
                Some(u) => format!("{slot}: update {create} to {u}"),
            };
            out.push(Compared {
                name,
                slot: slot.to_owned(),
                create: Some(create),
                update: update.map(Some),
            });
        }
    }
    out
}

/// Both sides of the comparison, and what it found.
struct Comparison {
    real: Api<DynamicObject>,
    fake: Api<DynamicObject>,
    kind: ApiResource,
    compared: usize,
    failures: Vec<String>,
    /// The apiserver's message of each case it refused, by case name.
    messages: BTreeMap<String, String>,
}

impl Comparison {
    /// Runs `case` on both sides; whether the apiserver refused it.
    async fn compare(&mut self, case: &Compared) -> bool {
        self.compared += 1;
        let apiserver = run(&self.real, &self.kind, self.compared, case).await;
        let ours = run(&self.fake, &self.kind, self.compared, case).await;
        if apiserver != ours || matches!(apiserver, Seen::Failed(_)) {
            self.failures.push(format!(
                "{}:\n  apiserver {apiserver:?}\n  fake      {ours:?}",
                case.name
            ));
        }
        if let Seen::Refused { message, .. } = &apiserver {
            self.messages.insert(case.name.clone(), message.clone());
        }
        matches!(apiserver, Seen::Refused { .. })
    }

    /// The same comparison of another kind.
    fn of(self, kind: ApiResource, real: kube::Client, fake: kube::Client) -> Self {
        Comparison {
            real: Api::namespaced_with(real, "default", &kind),
            fake: Api::namespaced_with(fake, "default", &kind),
            kind,
            ..self
        }
    }

    fn new(kind: ApiResource, real: kube::Client, fake: kube::Client) -> Self {
        Comparison {
            real: Api::namespaced_with(real, "default", &kind),
            fake: Api::namespaced_with(fake, "default", &kind),
            kind,
            compared: 0,
            failures: Vec::new(),
            messages: BTreeMap::new(),
        }
    }
}

/// The kind of a proof, as [`NOT_COMPARED`] names it.
fn case_kind(p: &Placed) -> String {
    let kind = format!("{:?}", p.proof.case);
    kind.split([' ', '{']).next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_fake_admits_what_the_apiserver_admits() {
    require_assets!();
    let proofs = fixture::proofs();
    let crds = fixture_crds(&proofs);
    let crd = crds.get(fixture::KIND).expect("the fixture's CRD");
    let second = schema_crd();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[crd.clone(), second.clone()], Duration::from_secs(60))
        .await
        .expect("the tables' CRDs are accepted and Established");
    let fake = FakeApi::new().with_crd(crd).with_crd(&second);
    let proof = resource(fixture::GROUP, fixture::KIND);
    let mut table = Comparison::new(proof, plane.client(), fake.client());
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut refused = BTreeSet::new();
    for p in &proofs {
        let Some(cases) = cases_of(p) else {
            *skipped.entry(case_kind(p)).or_default() += 1;
            continue;
        };
        for case in cases {
            if table.compare(&case).await {
                refused.insert(p.kind.name());
            }
        }
    }
    let from_proofs = table.compared;
    let mut table = table.of(
        resource(SCHEMA_GROUP, SCHEMA_KIND),
        plane.client(),
        fake.client(),
    );
    let mut refused_cases = BTreeSet::new();
    let mut admitted_cases = BTreeSet::new();
    for case in schema_compared() {
        if table.compare(&case).await {
            refused_cases.insert(case.name.clone());
        } else {
            admitted_cases.insert(case.name.clone());
        }
    }
    eprintln!(
        "fake/apiserver admission: {} cases compared ({from_proofs} from {} proofs, refusals of {} markers; {} of the schema table)",
        table.compared,
        proofs.len(),
        refused.len(),
        table.compared - from_proofs,
    );
    for (kind, why) in NOT_COMPARED {
        if kind.contains(' ') {
            eprintln!("not compared: {kind}: {why}");
            continue;
        }
        let n = skipped.remove(*kind).unwrap_or(0);
        eprintln!("not compared: {n} proofs of kind {kind}: {why}");
    }
    assert!(
        skipped.is_empty(),
        "proofs neither compared nor excepted: {skipped:?}"
    );
    assert!(
        table.failures.is_empty(),
        "the fake and the apiserver differ:\n{}",
        table.failures.join("\n")
    );
    for marker in [
        "kubebuilder:validation:Pattern",
        "kubebuilder:validation:Maximum",
        "kubebuilder:validation:XValidation",
        "kubebuilder:validation:ExactlyOneOf",
        "k8s:immutable",
        "listMapKey",
    ] {
        assert!(
            refused.contains(marker),
            "no refusal compared for {marker}: {refused:?}"
        );
    }
    for case in [
        "datetime: create \"2023-02-29T10:00:00Z\"",
        "int32: create 2147483648",
        "counts: create {\"k\":4}",
        "keyed: create [{\"name\":\"a\",\"v\":\"long\"}]",
        "msgexpr: create 12",
        "fieldpath: create {\"a\":\"x\"}",
        "sorted: create [2,1]",
        "failing: create {\"b\":0}",
        "isip: create \"::ffff:10.0.0.1\"",
        "isquantity: create \"1Gb\"",
        "once: update 5 to 4",
        "ratchet: update {\"a\":1,\"b\":3} to {\"a\":2,\"b\":4}",
    ] {
        assert!(
            refused_cases.contains(case),
            "{case} is not refused: {refused_cases:?}"
        );
    }
    // Kubernetes' CEL libraries: each admits one value and refuses another, with the message
    // its messageExpression formats or the error the function raises
    let library_cases = [
        ("listindex", "[1,2,3]", "[2,1,2]"),
        ("listminmax", "[1,2,3]", "[]"),
        ("liststrings", "[\"a\",\"b\"]", "[\"c\",\"b\",\"a\"]"),
        ("strfuncs", "\" ABC \"", "\"abba\\\"\""),
        ("strerrs", "\"abcdef\"", "\"abc\""),
        ("stroffsets", "\"\"", "\"aaaaaaaaaaaa\""),
        ("formats", "\"ok\"", "\"%d|%s|%.2f|%s|%s|%s|%d|%x\""),
        ("findre", "\"ab12\"", "\"abc\""),
        ("findbad", "\"b\"", "\"[\""),
        ("sets", "[2,1]", "[1,3]"),
        ("urls", "\"https://example.com/x\"", "\"x\""),
        ("ips", "\"127.0.0.1\"", "\"10.0.0.256\""),
        ("cidrs", "\"10.0.0.0/8\"", "\"10.0.0.0/33\""),
        ("cidrarg", "\"10.0.0.1\"", "\"10.0.0\""),
        ("quantities", "\"500m\"", "\"1Gb\""),
        ("quantityint", "\"9\"", "\"1.5\""),
        ("semvers", "\"1.2.3\"", "\"1.2\""),
        ("semvernorm", "\"v1.2\"", "\"0.1\""),
    ];
    for (slot, admitted, refused) in library_cases {
        let admitted = format!("{slot}: create {admitted}");
        let refused = format!("{slot}: create {refused}");
        assert!(
            admitted_cases.contains(&admitted),
            "{admitted} is not admitted: {admitted_cases:?}"
        );
        assert!(
            refused_cases.contains(&refused),
            "{refused} is not refused: {refused_cases:?}"
        );
        // the refusal shows what the functions computed, or the error one raised: not the
        // fallback of a messageExpression that failed on both sides
        let message = &table.messages[&refused];
        assert!(
            !message.contains("failed rule:"),
            "{refused}: the messageExpression failed: {message}"
        );
    }
}
