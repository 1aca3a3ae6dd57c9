//! `operator-gen manifests` writes the same bytes whatever the run and whatever the order of its
//! input: every file it writes (CRDs, `role.yaml`, the webhook manifests) is compared byte for
//! byte across two processes on one project (the first with a cold scan cache, the second
//! warm), a fresh copy of it, and a project whose kinds were created in the opposite order and
//! whose `mod` declarations are reversed (so its kinds, controllers, RBAC markers and webhook
//! markers are all read in reverse), with its type files renamed and reached through `#[path]`.

use std::collections::BTreeMap;
use std::path::Path;

use operator_gen_tests::cli;

/// The kinds, in the order project A creates them; project B creates them in reverse.
const KINDS: &[(&str, &str)] = &[
    (
        "create api --group crew --version v1 --kind Captain",
        "src/api/crew/v1/captain.rs",
    ),
    (
        "create api --group ship --version v1beta1 --kind Frigate --namespaced=false",
        "src/api/ship/v1beta1/frigate.rs",
    ),
    (
        "create api --group crew --version v1 --kind Admiral",
        "src/api/crew/v1/admiral.rs",
    ),
];

/// Every file `manifests` writes for [`KINDS`], by name.
const WRITTEN: &[&str] = &[
    "config/crd/bases/crew.example.com_admirals.yaml",
    "config/crd/bases/crew.example.com_captains.yaml",
    "config/crd/bases/ship.example.com_frigates.yaml",
    "config/rbac/role.yaml",
    "config/webhook/manifests.yaml",
];

fn ok(dir: &Path, args: &str) {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
}

/// A webhook marker pair (validating and mutating) for `kind` of `group`, as a module's `//!`
/// lines, so the webhook manifests are generated and take their order from the sources.
fn webhook_markers(group: &str, version: &str, kind: &str) -> String {
    let lower = kind.to_lowercase();
    let plural = format!("{lower}s");
    let path = |verb: &str| format!("/{verb}-{}-{version}-{lower}", group.replace('.', "-"));
    format!(
        "//! +kubebuilder:webhook:path={},mutating=false,failurePolicy=fail,sideEffects=None,groups={group},resources={plural},verbs=create;update,versions={version},name=v{lower}.{group},admissionReviewVersions=v1\n\
         //! +kubebuilder:webhook:path={},mutating=true,failurePolicy=fail,sideEffects=None,groups={group},resources={plural},verbs=create;update,versions={version},name=m{lower}.{group},admissionReviewVersions=v1\n",
        path("validate"),
        path("mutate"),
    )
}

/// A project with [`KINDS`] created in `order`, each kind's file given webhook markers; when
/// `reorder`, every `mod.rs` under `src/` then declares its modules in reverse (`create api`
/// keeps them sorted) and each type file is moved to `zz_<name>.rs`, reached with `#[path]`.
fn project(dir: &Path, order: &[usize], reorder: bool) {
    std::fs::create_dir_all(dir).expect("mkdir");
    ok(dir, "init --domain example.com --multigroup");
    for &i in order {
        let (args, file) = KINDS[i];
        ok(dir, args);
        let words = cli::split_args(args);
        let flag = |name: &str| {
            let at = words.iter().position(|w| w == name).expect("flag");
            words[at + 1].clone()
        };
        let group = format!("{}.example.com", flag("--group"));
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("read the kind's file");
        // the markers go after the license header, with the file's other `//!` lines
        let at = text.find("//! ").expect("the kind's file has a //! line");
        let marked = format!(
            "{}{}{}",
            &text[..at],
            webhook_markers(&group, &flag("--version"), &flag("--kind")),
            &text[at..]
        );
        std::fs::write(&path, marked).expect("write the kind's file");
    }
    if !reorder {
        return;
    }
    for module in mod_files(&dir.join("src")) {
        let text = std::fs::read_to_string(&module).expect("read mod.rs");
        let mut declarations: Vec<&str> =
            text.lines().filter(|l| l.starts_with("pub mod ")).collect();
        declarations.reverse();
        let mut next = declarations.into_iter();
        let reversed: String = text
            .lines()
            .map(|l| {
                if l.starts_with("pub mod ") {
                    next.next().expect("as many declarations")
                } else {
                    l
                }
            })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&module, reversed).expect("write mod.rs");
    }
    for &(_, file) in KINDS {
        let path = dir.join(file);
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        std::fs::rename(&path, path.with_file_name(format!("zz_{stem}.rs"))).expect("rename");
        let module = path.with_file_name("mod.rs");
        let text = std::fs::read_to_string(&module).expect("read mod.rs");
        let declaration = format!("pub mod {stem};");
        assert!(
            text.contains(&declaration),
            "{} lacks `{declaration}`",
            module.display()
        );
        let text = text.replacen(
            &declaration,
            &format!("#[path = \"zz_{stem}.rs\"]\n{declaration}"),
            1,
        );
        std::fs::write(&module, text).expect("write mod.rs");
    }
}

/// Every `mod.rs` under `dir`.
fn mod_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(mod_files(&path));
        } else if path.file_name().is_some_and(|n| n == "mod.rs") {
            out.push(path);
        }
    }
    out
}

/// The files `manifests` writes, read after it ran: every path of [`WRITTEN`] that exists, and
/// anything else under the directories it writes to.
fn written(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    cli::snapshot(dir)
        .into_iter()
        .filter(|(path, _)| {
            path.starts_with("config/crd/bases/")
                || path.starts_with("config/webhook/")
                || path == "config/rbac/role.yaml"
        })
        .collect()
}

/// Runs `manifests` in its own process and returns what it wrote.
fn manifests(dir: &Path, args: &str) -> BTreeMap<String, Vec<u8>> {
    ok(dir, args);
    written(dir)
}

/// The first file that differs between two runs, for a readable failure.
fn difference(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    if a.keys().ne(b.keys()) {
        return Some(format!(
            "files differ: {:?} vs {:?}",
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>()
        ));
    }
    a.iter().find_map(|(path, bytes)| {
        (b[path] != *bytes).then(|| {
            format!(
                "{path}: {}",
                cli::first_line_difference(
                    &String::from_utf8_lossy(bytes),
                    &String::from_utf8_lossy(&b[path])
                )
            )
        })
    })
}

#[test]
fn manifests_writes_the_same_bytes_across_processes_and_input_orders() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let forward: Vec<usize> = (0..KINDS.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();

    let a = tmp.path().join("a");
    project(&a, &forward, false);
    let cold = manifests(&a, "manifests");
    assert_eq!(
        cold.keys().map(String::as_str).collect::<Vec<_>>(),
        WRITTEN,
        "manifests wrote other files than the three CRDs, the role and the webhook manifests"
    );
    let warm = manifests(&a, "manifests");
    if let Some(d) = difference(&cold, &warm) {
        panic!("a second process (warm scan cache) wrote other bytes: {d}");
    }

    let copy = tmp.path().join("copy");
    cli::copy_dir(&a, &copy);
    let _ = std::fs::remove_dir_all(copy.join("target"));
    let fresh = manifests(&copy, "manifests --no-cache");
    if let Some(d) = difference(&cold, &fresh) {
        panic!("a fresh copy of the project gave other bytes: {d}");
    }

    let b = tmp.path().join("b");
    project(&b, &backward, true);
    let reversed = manifests(&b, "manifests");
    if let Some(d) = difference(&cold, &reversed) {
        panic!("the kinds read in reverse order, their files renamed, gave other bytes: {d}");
    }
    // the orders really differ: B's module declares the kinds in the other order
    let declarations = |dir: &Path| {
        std::fs::read_to_string(dir.join("src/api/crew/v1/mod.rs")).expect("read crew/v1/mod.rs")
    };
    let (a_mod, b_mod) = (declarations(&a), declarations(&b));
    let position = |text: &str, module: &str| {
        text.find(&format!("pub mod {module};"))
            .unwrap_or_else(|| panic!("no `pub mod {module};` in {text}"))
    };
    assert!(
        (position(&a_mod, "captain") < position(&a_mod, "admiral"))
            != (position(&b_mod, "captain") < position(&b_mod, "admiral")),
        "the two projects declare the kinds in the same order:\n{a_mod}\n---\n{b_mod}"
    );
}
