//! How `operator-gen manifests` reads files: its summary cache and its CRD cache give byte-identical output
//! with and without it, and a corrupt, foreign or stale entry is recomputed, never used; the
//! stat stamps skip reading settled files without ever hiding a change; a run whose files all
//! mean what they meant at the last run (edits to comments and function bodies) skips the scan,
//! and any other change (a type, a module file found first, an option, a damaged record) does not;
//! module files that include themselves (`#[path]` or symlink cycles) and files that are not
//! UTF-8 are located errors.

use std::path::{Path, PathBuf};

use operator_gen::manifests::{self, Cache, ManifestsOptions, Outputs};
use operator_gen_tests::cli::copy_dir;
use operator_gen_tests::workspace;

fn generate(root: &Path, cache: Cache) -> Outputs {
    try_generate(root, cache).unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

fn try_generate(root: &Path, cache: Cache) -> Result<Outputs, String> {
    manifests::generate(
        root,
        &ManifestsOptions {
            cache,
            allow_dangerous_types: true,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())
}

/// The cache file, which holds an entry per summary.
fn cache_file(dir: &Path) -> PathBuf {
    dir.join("summaries")
}

/// The cache's entries (a header line with the key and checksum, then the summary line), in
/// the order of the file.
fn entries(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(cache_file(dir)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines.chunks(2).map(|pair| pair.join("\n")).collect()
}

/// Writes `entries` as the cache file.
fn write_entries(dir: &Path, entries: &[String]) {
    let mut text = entries.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    std::fs::write(cache_file(dir), text).expect("write the cache file");
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("testdata/conformance"))
        .expect("testdata/conformance")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("src/lib.rs").is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn output_is_byte_identical_with_and_without_the_cache() {
    let mut compared = Vec::new();
    for case in cases() {
        let cache = tempfile::tempdir().expect("cache dir");
        let plain = try_generate(&case, Cache::Off);
        let filling = try_generate(&case, Cache::At(cache.path().to_path_buf()));
        let filled = entries(cache.path());
        assert_eq!(
            filled.is_empty(),
            plain.is_err(),
            "{}: a successful run writes entries, a failing one none",
            case.display()
        );
        let cached = try_generate(&case, Cache::At(cache.path().to_path_buf()));
        assert_eq!(
            entries(cache.path()),
            filled,
            "{}: a run on unchanged files wrote new entries",
            case.display()
        );
        assert_eq!(plain, filling, "{}: filling the cache", case.display());
        assert_eq!(plain, cached, "{}: reading the cache", case.display());
        compared.push(case.file_name().map(|n| n.to_string_lossy().into_owned()));
    }
    println!(
        "compared {} cases with and without the cache: {compared:?}",
        compared.len()
    );
    assert!(compared.contains(&Some("cronjobs".to_string())));
    assert!(compared.contains(&Some("project_v4".to_string())));
}

/// A copy of the project_v4 case (18 files: API versions, controllers, webhooks) to damage.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("project dir");
    copy_dir(
        &workspace().join("testdata/conformance/project_v4"),
        dir.path(),
    );
    dir
}

/// Damage done to a cache entry: (the entry, another entry) → new text.
type Damage = Box<dyn Fn(&str, &str) -> String>;

#[test]
fn corrupt_entries_are_recomputed_not_trusted() {
    let dir = project();
    let plain = generate(dir.path(), Cache::Off);
    let cache = tempfile::tempdir().expect("cache dir");
    let at = Cache::At(cache.path().to_path_buf());
    generate(dir.path(), at.clone());
    let good = entries(cache.path());
    assert!(good.len() >= 2, "expected an entry per file, got {good:?}");
    // a summary that still parses but says something else: a line number changed
    let lying = |text: &str| {
        let at = text.find("\"line\":").expect("entries hold line numbers") + 7;
        let digit = text[at..]
            .find(|c: char| c.is_ascii_digit())
            .expect("a number")
            + at;
        let mut out = text.to_string();
        let changed = if &text[digit..=digit] == "9" {
            "1"
        } else {
            "9"
        };
        out.replace_range(digit..=digit, changed);
        out
    };
    let damages: Vec<(&str, Damage)> = vec![
        (
            "truncated",
            Box::new(|t: &str, _| t[..t.len() / 2].to_string()),
        ),
        ("emptied", Box::new(|_: &str, _| String::new())),
        ("garbled", Box::new(|t: &str, _| t.replace('{', "}"))),
        (
            "summary changed, checksum kept",
            Box::new(move |t: &str, _| lying(t)),
        ),
        (
            "another file's summary under this key",
            Box::new(|t: &str, other: &str| {
                let header = t.lines().next().unwrap_or_default();
                let summary = other.lines().nth(1).unwrap_or_default();
                format!("{header}\n{summary}")
            }),
        ),
        (
            "header only",
            Box::new(|t: &str, _| t.lines().next().unwrap_or_default().to_string()),
        ),
    ];
    let mut tried = 0;
    for (what, damage) in &damages {
        for i in 0..good.len() {
            let mut damaged = good.clone();
            damaged[i] = damage(&good[i], &good[(i + 1) % good.len()]);
            write_entries(cache.path(), &damaged);
            assert_eq!(
                generate(dir.path(), at.clone()),
                plain,
                "{what} entry {i} changed the output"
            );
            assert_eq!(
                entries(cache.path()),
                good,
                "{what} entry {i}: the cache file was not rewritten with the good entries"
            );
            tried += 1;
        }
    }
    // the whole file damaged: cut anywhere, or not a cache file at all
    let whole = std::fs::read_to_string(cache_file(cache.path())).expect("cache file");
    let cuts = [1, whole.len() / 3, whole.len() / 2, whole.len() - 1];
    for cut in cuts {
        std::fs::write(cache_file(cache.path()), &whole[..cut]).expect("cut the cache file");
        assert_eq!(generate(dir.path(), at.clone()), plain, "cut at {cut}");
        assert_eq!(entries(cache.path()), good, "cut at {cut}: not rewritten");
        tried += 1;
    }
    println!(
        "{tried} damaged entries ({} kinds of damage, and the file cut at {} places) ignored",
        damages.len(),
        cuts.len()
    );
}

#[test]
fn an_edited_file_is_parsed_again() {
    let dir = project();
    let cache = tempfile::tempdir().expect("cache dir");
    let at = Cache::At(cache.path().to_path_buf());
    let before = generate(dir.path(), at.clone());
    // a description line of the v2 FirstMate changes: the output must follow the edit
    let file = dir.path().join("src/v2/firstmate.rs");
    let text = std::fs::read_to_string(&file).expect("v2/firstmate.rs");
    let doc = "foo is an example field of FirstMate.";
    assert!(text.contains(doc), "v2/firstmate.rs documents foo");
    std::fs::write(&file, text.replacen(doc, "Edited description.", 1)).expect("edit");
    let filled = entries(cache.path());
    let cached = generate(dir.path(), at);
    let plain = generate(dir.path(), Cache::Off);
    assert_eq!(cached, plain);
    // the edited file's new summary is appended: the file is not written anew
    let after = entries(cache.path());
    assert!(
        after.len() > filled.len() && after[..filled.len()] == filled[..],
        "the new entry was not appended to the {} entries there",
        filled.len()
    );
    assert_ne!(cached, before, "the edit changes the output");
    assert!(
        cached.values().any(|y| y.contains("Edited description.")),
        "the edited description is in the output"
    );
}

fn scan_error(root: &Path) -> String {
    match manifests::generate(root, &ManifestsOptions::default()) {
        Ok(_) => panic!("{} scanned without error", root.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_module_that_includes_its_own_file_is_a_located_error() {
    let dir = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/lib.rs"), "pub mod a;\n").expect("lib.rs");
    std::fs::create_dir_all(dir.path().join("src/a")).expect("src/a");
    std::fs::write(
        dir.path().join("src/a/mod.rs"),
        "#[path = \"mod.rs\"]\npub mod again;\n",
    )
    .expect("a/mod.rs");
    assert_eq!(
        scan_error(dir.path()),
        "src/a/mod.rs:2:9: module `again` includes src/a/mod.rs, a file of a module that encloses it (a #[path] or symlink cycle): point it at a file of its own"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_a_located_error() {
    let dir = tempfile::tempdir().expect("project");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("src");
    std::fs::write(src.join("lib.rs"), "pub mod inner;\n").expect("lib.rs");
    std::fs::create_dir_all(src.join("inner")).expect("inner");
    std::fs::write(src.join("inner/mod.rs"), "pub mod deeper;\n").expect("inner/mod.rs");
    // inner/deeper -> inner: deeper/mod.rs is inner/mod.rs again
    std::os::unix::fs::symlink(src.join("inner"), src.join("inner/deeper")).expect("symlink");
    assert_eq!(
        scan_error(dir.path()),
        "src/inner/mod.rs:1:9: module `deeper` includes src/inner/deeper/mod.rs, a file of a module that encloses it (a #[path] or symlink cycle): point it at a file of its own"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_a_located_error() {
    let dir = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/lib.rs"), "pub mod latin1;\n").expect("lib.rs");
    std::fs::write(
        dir.path().join("src/latin1.rs"),
        b"//! ok\n/// caf\xe9\npub struct A;\n",
    )
    .expect("latin1.rs");
    assert_eq!(
        scan_error(dir.path()),
        "src/latin1.rs:2:8: is not UTF-8 text: save the file as UTF-8"
    );
}

/// The cache of CRDs, beside the summaries.
fn crd_cache_file(dir: &Path) -> PathBuf {
    dir.join("crds")
}

/// Writes `files` (path under the project, text) into `root`.
fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// A kind whose spec reaches its types through a glob import of a module that re-exports them
/// from its own files, and a second kind beside it.
const FLEET: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "pub mod api;\npub mod early;\npub mod shared;\npub mod tools;\n",
    ),
    (
        "src/early.rs",
        "//! Glob-imported before `shared`, with no `Hull` yet.\n",
    ),
    ("src/api/mod.rs", "pub mod v1;\n"),
    ("src/api/v1/mod.rs", "pub mod ship;\npub mod dock;\n"),
    (
        "src/api/v1/ship.rs",
        "use crate::early::*;\nuse crate::shared::*;\n\n/// A ship.\n#[derive(CustomResource)]\n#[k8s(group = \"fleet.example.com\", version = \"v1\", kind = \"Ship\")]\npub struct ShipSpec {\n    /// The hull.\n    pub hull: Hull,\n}\n",
    ),
    (
        "src/api/v1/dock.rs",
        "/// A dock.\n#[derive(CustomResource)]\n#[k8s(group = \"fleet.example.com\", version = \"v1\", kind = \"Dock\")]\npub struct DockSpec {\n    /// Berths.\n    pub berths: i32,\n}\n",
    ),
    ("src/shared/mod.rs", "mod hull;\npub use hull::Hull;\n"),
    (
        "src/shared/hull.rs",
        "/// A hull.\n#[derive(Schema)]\npub struct Hull {\n    /// Length in metres.\n    pub length: i32,\n}\n",
    ),
    ("src/tools.rs", "//! Nothing a CRD reads.\n"),
];

/// An edit of the project: what it is, the files it writes, a field Ship's CRD then has, and
/// whether the CRD changes.
type Step<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, bool);

/// The CRD of Ship.
const SHIP: &str = "config/crd/bases/fleet.example.com_ships.yaml";

#[test]
fn a_cached_crd_follows_every_module_it_was_resolved_through() {
    let dir = tempfile::tempdir().expect("project dir");
    let cache = tempfile::tempdir().expect("cache dir");
    let at = Cache::At(cache.path().to_path_buf());
    write_files(dir.path(), FLEET);
    // each step edits the project; the cached run must equal a run without the cache, and say
    // whether the step changes Ship's CRD
    let steps: &[Step] = &[
        ("nothing edited", &[], "length", false),
        (
            "a file no CRD reads",
            &[(
                "src/tools.rs",
                "//! Still nothing a CRD reads.\npub fn f() {}\n",
            )],
            "length",
            false,
        ),
        (
            "the file of a type the spec reaches through a glob and a re-export",
            &[(
                "src/shared/hull.rs",
                "/// A hull.\n#[derive(Schema)]\npub struct Hull {\n    /// Length in metres.\n    pub length: i32,\n    /// Beam in metres.\n    pub beam: i32,\n}\n",
            )],
            "beam",
            true,
        ),
        (
            "the re-export now names a type of a new module file",
            &[
                (
                    "src/shared/mod.rs",
                    "mod hull;\nmod keel;\npub use keel::Keel as Hull;\n",
                ),
                (
                    "src/shared/keel.rs",
                    "/// A keel.\n#[derive(Schema)]\npub struct Keel {\n    /// Draft in metres.\n    pub draft: i32,\n}\n",
                ),
            ],
            "draft",
            true,
        ),
        (
            "a module glob-imported before the one that had the type gains a type of its name (the scan takes the first glob that has it)",
            &[(
                "src/early.rs",
                "//! Glob-imported before `shared`.\n\n/// A hull of the early module.\n#[derive(Schema)]\npub struct Hull {\n    /// Mast count.\n    pub masts: i32,\n}\n",
            )],
            "masts",
            true,
        ),
    ];
    let mut before = generate(dir.path(), at.clone());
    assert!(before[SHIP].contains("length"), "{}", before[SHIP]);
    for (what, edits, field, changes) in steps {
        write_files(dir.path(), edits);
        let crds_before = std::fs::read(crd_cache_file(cache.path())).expect("the CRD cache");
        let cached = generate(dir.path(), at.clone());
        let plain = generate(dir.path(), Cache::Off);
        assert_eq!(cached, plain, "{what}: the cached run differs");
        assert!(
            cached[SHIP].contains(field),
            "{what}: no {field} in\n{}",
            cached[SHIP]
        );
        assert_eq!(
            cached[SHIP] != before[SHIP],
            *changes,
            "{what}: Ship's CRD should change: {changes}"
        );
        let crds_after = std::fs::read(crd_cache_file(cache.path())).expect("the CRD cache");
        assert_eq!(
            crds_after != crds_before,
            *changes,
            "{what}: the CRD cache should be written anew only when a CRD was emitted anew"
        );
        before = cached;
    }
    // a damaged CRD cache is not trusted: each entry's text garbled, or the file cut short
    let plain = generate(dir.path(), Cache::Off);
    let whole = std::fs::read_to_string(crd_cache_file(cache.path())).expect("the CRD cache");
    let lying = whole.replace("masts", "sails");
    for (what, text) in [
        ("garbled", whole.replace('{', "}")),
        ("cut", whole[..whole.len() / 2].to_string()),
        ("changed, checksums kept", lying),
    ] {
        std::fs::write(crd_cache_file(cache.path()), text).expect("damage the CRD cache");
        assert_eq!(generate(dir.path(), at.clone()), plain, "{what} CRD cache");
    }
    println!("{} edits followed through the CRD cache", steps.len());
}

/// The outputs `manifests` wrote into `root`, as on disk.
fn written(root: &Path, outputs: &Outputs) -> Outputs {
    outputs
        .keys()
        .map(|rel| {
            let text = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
            (rel.clone(), text)
        })
        .collect()
}

/// `operator-gen manifests` in `root` with its cache in `cache`.
fn manifests_run(root: &Path, cache: &Path) {
    manifests_run_cut(root, cache, None);
}

/// Replaces `from` by `to` (of the same length) in the file at `path`.
fn same_size_edit(path: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len(), "an edit that keeps the size");
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} holds {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("edit");
}

/// A project `manifests` can run in (it has a `PROJECT` file), and a directory for its cache.
fn project_with_cache() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = project();
    std::fs::write(
        dir.path().join("PROJECT"),
        "layout:\n- go.kubebuilder.io/v4\n",
    )
    .expect("PROJECT");
    (dir, tempfile::tempdir().expect("cache dir"))
}

/// Longer than the time a file must be left unchanged before it gets a stamp.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(2200);

#[cfg(unix)]
#[test]
fn stamps_skip_settled_files_and_never_hide_a_change() {
    let (dir, cache) = project_with_cache();
    let root = dir.path();
    let stamps = cache.path().join("stamps");
    manifests_run(root, cache.path());
    // nothing has settled yet: no stamps
    let none = std::fs::read_to_string(&stamps).unwrap_or_default();
    assert!(
        !none.contains("firstmate.rs"),
        "a fresh file got a stamp: {none}"
    );
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    let text = std::fs::read_to_string(&stamps).expect("stamps written once files settled");
    let firstmate = root.join("src/v2/firstmate.rs");
    let crd_rel = "config/crd/bases/crew.testproject.org_firstmates.yaml";
    for file in [firstmate.clone(), root.join(crd_rel)] {
        assert!(
            text.contains(&format!(" {}\n", file.display())),
            "no stamp for {}",
            file.display()
        );
    }
    let check = |what: &str| {
        let plain = generate(root, Cache::Off);
        assert_eq!(written(root, &plain), plain, "{what}");
    };
    check("settled run");

    // a source edited without changing its size, at once: its stamp no longer matches
    same_size_edit(
        &firstmate,
        "foo is an example field",
        "bar is an example field",
    );
    manifests_run(root, cache.path());
    check("a same-size source edit");
    assert!(
        std::fs::read_to_string(root.join(crd_rel))
            .expect("crd")
            .contains("bar is an example field"),
        "the edit reached the CRD"
    );

    // an output edited by hand, same size, after its stamp settled: written back
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    same_size_edit(
        &root.join(crd_rel),
        "bar is an example field",
        "baz is an example field",
    );
    manifests_run(root, cache.path());
    check("a same-size output edit");

    // a stamp given another file's key (its checksum kept) is not believed
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    let text = std::fs::read_to_string(&stamps).expect("stamps");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let line_of = |file: &str| {
        lines
            .iter()
            .position(|l| l.ends_with(file))
            .unwrap_or_else(|| panic!("no stamp for {file}: {text}"))
    };
    // FirstMate's v1 types taking Admiral's summary would drop FirstMate's v1
    let (a, b) = (line_of("src/v1/firstmate.rs"), line_of("src/v1/admiral.rs"));
    let key = |l: &str| l.split(' ').nth(1).unwrap_or_default().to_string();
    let (ka, kb) = (key(&lines[a]), key(&lines[b]));
    lines[a] = lines[a].replacen(&ka, &kb, 1);
    std::fs::write(&stamps, lines.join("\n") + "\n").expect("damage the stamps");
    std::fs::remove_dir_all(root.join("config")).expect("outputs removed");
    manifests_run(root, cache.path());
    check("a stamp with another file's key");
    // and cut anywhere
    for cut in [1, text.len() / 2, text.len() - 1] {
        std::fs::write(&stamps, &text[..cut]).expect("cut the stamps");
        manifests_run(root, cache.path());
        check(&format!("stamps cut at {cut}"));
    }
}

/// `operator-gen manifests` in `root` with its cache in `cache` and descriptions cut at `max`.
fn manifests_run_cut(root: &Path, cache: &Path, max: Option<usize>) {
    let opts = ManifestsOptions {
        root: Some(root.to_path_buf()),
        cache: Cache::At(cache.to_path_buf()),
        allow_dangerous_types: true,
        max_desc_len: max,
        ..Default::default()
    };
    let printer = operator_gen::Printer::new(operator_gen::printer::Verbosity::Quiet);
    manifests::run(&opts, &printer).unwrap_or_else(|e| panic!("manifests: {e}"));
}

/// When the record of the last run was written (a run that scans writes it; one that finds
/// nothing changed in meaning does not).
fn record_written(cache: &Path) -> std::time::SystemTime {
    std::fs::metadata(cache.join("last-run"))
        .and_then(|m| m.modified())
        .expect("the last run's record")
}

#[cfg(unix)]
#[test]
fn a_run_whose_files_mean_what_they_meant_skips_the_scan_and_never_hides_a_change() {
    let (dir, cache) = project_with_cache();
    let root = dir.path();
    let check = |max: Option<usize>, what: &str| {
        let plain = manifests::generate(
            root,
            &ManifestsOptions {
                allow_dangerous_types: true,
                max_desc_len: max,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(written(root, &plain), plain, "{what}");
    };
    let controller = root.join("src/controller/captain.rs");
    let append = |path: &Path, text: &str| {
        let mut was = std::fs::read_to_string(path).expect("read");
        was.push_str(text);
        std::fs::write(path, was).expect("append");
    };
    append(&controller, "\npub fn helper() -> u32 {\n    1\n}\n");
    // a file in src/ that no `mod` declares, which the scan may read ahead: not the operator's
    std::fs::write(root.join("src/v1/stray.rs"), "this is not { rust").expect("stray.rs");
    // Sailor's types in `sailor/mod.rs`, the second place `mod sailor;` looks
    std::fs::create_dir(root.join("src/v1/sailor")).expect("sailor/");
    std::fs::rename(
        root.join("src/v1/sailor.rs"),
        root.join("src/v1/sailor/mod.rs"),
    )
    .expect("move sailor.rs");
    manifests_run(root, cache.path());
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    check(None, "settled run");

    // a function body and a comment edited: the files mean what they meant, no scan runs
    let before = record_written(cache.path());
    same_size_edit(&controller, "    1\n}", "    2\n}");
    append(&root.join("src/v1/firstmate.rs"), "// a comment\n");
    manifests_run(root, cache.path());
    assert_eq!(
        record_written(cache.path()),
        before,
        "a scan ran after edits that change no summary"
    );
    check(None, "a body and a comment edited");

    // a type's documentation edited: the scan runs and the CRD follows
    same_size_edit(
        &root.join("src/v1/firstmate.rs"),
        "foo is an example field",
        "bar is an example field",
    );
    manifests_run(root, cache.path());
    check(None, "a doc comment edited");
    assert_ne!(
        record_written(cache.path()),
        before,
        "no scan after a type's change"
    );

    // a module file appears where `mod sailor;` looks first (`sailor.rs` before the
    // `sailor/mod.rs` it found), with another description: Sailor's CRD follows
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    let sailor = std::fs::read_to_string(root.join("src/v1/sailor/mod.rs")).expect("sailor");
    std::fs::write(
        root.join("src/v1/sailor.rs"),
        sailor.replace("foo is an example field", "qux is an example field"),
    )
    .expect("sailor.rs");
    manifests_run(root, cache.path());
    check(None, "a module file found first");
    assert!(
        std::fs::read_to_string(root.join("config/crd/bases/crew.testproject.org_sailors.yaml"))
            .expect("sailor's crd")
            .contains("qux is an example field"),
        "the module file found first reached the CRD"
    );

    // another option: the scan runs
    manifests_run_cut(root, cache.path(), Some(10));
    check(Some(10), "descriptions cut");
    manifests_run(root, cache.path());
    check(None, "descriptions whole again");

    // a damaged record, or one cut short, costs a scan and nothing else
    std::thread::sleep(SETTLE);
    manifests_run(root, cache.path());
    let record = cache.path().join("last-run");
    let text = std::fs::read_to_string(&record).expect("record");
    let damaged = [
        text.replacen("file\t", "file\t0", 1),
        text[..text.len() / 2].to_string(),
        text.replacen("operator-gen last run", "operator-gen last fun", 1),
    ];
    let crd = "config/crd/bases/crew.testproject.org_firstmates.yaml";
    for (i, bad) in damaged.iter().enumerate() {
        std::fs::write(&record, bad).expect("damage the record");
        std::fs::remove_file(root.join(crd)).expect("an output removed");
        manifests_run(root, cache.path());
        check(None, &format!("damaged record {i}"));
    }
}
