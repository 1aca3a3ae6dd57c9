//! No input makes the marker parser, the source scan, the scaffold commands' edits, the
//! storage-version reader, `PROJECT` parsing or the webhook handlers panic or hang: the stable
//! run of the cargo-fuzz targets under `fuzz/` (which need nightly). Their entry functions
//! (`operator_gen_tests::fuzz`) run over the committed corpus `fuzz/corpus/<target>/`, seed files
//! (the valid testdata sources, the ui cases and their marker lines; the files of
//! `tests/cases`), and a fixed number of mutations of those made by a small seeded PRNG
//! (truncations, byte flips, inserted punctuation, huge numbers, deep nesting). Every input must
//! return without a panic within [`PER_INPUT`]; no input starts after [`PER_TARGET`].
//!
//! `NO_PANIC_ROUNDS=<n>` runs more rounds than the default; `NO_PANIC_SEED=<n>` changes the seed.

use operator_gen_tests::fuzz;
use operator_gen_tests::workspace;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Once, mpsc};
use std::time::{Duration, Instant};

/// The time one input may take (a debug build, on a shared machine).
const PER_INPUT: Duration = Duration::from_secs(30);

/// The time box of one target: no input is started after it (each test prints how many ran).
const PER_TARGET: Duration = Duration::from_secs(120);

/// splitmix64: small, seeded, good enough to spread mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const PUNCTUATION: &[&str] = &[
    "{", "}", "[", "]", "(", ")", "<", ">", ":", ";", "=", ",", "\"", "'", "`", "+", "/", "#", "!",
    "\\", "\n", "::", "=>", "///", "//!", "/// +", "#[", "#[k8s(", "r#", "\u{0}", "é", "🦀",
];

const HUGE: &[&str] = &[
    "99999999999999999999999999999",
    "-99999999999999999999999999999",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "inf",
    "-0",
    "0x7fffffff",
    "1_000",
    "4.",
    ".5",
];

/// Wraps a fragment in `depth` levels of nesting of one kind.
fn nested(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(64);
    match rng.below(6) {
        0 => format!("{}{}", "{".repeat(depth), "}".repeat(depth)),
        1 => format!("{}String{}", "Vec<".repeat(depth), ">".repeat(depth)),
        2 => format!("{}i32{}", "Option<".repeat(depth), ">".repeat(depth)),
        3 => format!("{}{}", "{a:".repeat(depth), "}".repeat(depth)),
        4 => format!("{}1{}", "[".repeat(depth), "]".repeat(depth)),
        _ => format!(
            "{}x{}",
            "BTreeMap<String, ".repeat(depth),
            ">".repeat(depth)
        ),
    }
}

fn char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One to four mutations of `seed`.
fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s = seed.to_string();
    for _ in 0..1 + rng.below(4) {
        let at = char_boundary(&s, rng.below(s.len() + 1));
        match rng.below(7) {
            0 => s.truncate(at),
            1 => {
                // flip one bit of one byte, then keep the text UTF-8
                let mut bytes = s.into_bytes();
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                s = String::from_utf8_lossy(&bytes).into_owned();
            }
            2 => {
                let piece: &&str = rng.pick(PUNCTUATION);
                s.insert_str(at, piece)
            }
            3 => {
                let piece: &&str = rng.pick(HUGE);
                s.insert_str(at, piece)
            }
            4 => s.insert_str(at, &nested(rng)),
            5 => {
                // drop a span
                let end = char_boundary(&s, at + rng.below(40));
                s.replace_range(at..end, "");
            }
            _ => {
                // duplicate a span
                let end = char_boundary(&s, at + rng.below(80));
                let piece = s[at..end].to_string();
                s.insert_str(end, &piece);
            }
        }
    }
    s
}

/// The files under `dir` that `keep` accepts, in a stable order.
fn files_where(dir: &Path, keep: fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_where(&p, keep, out);
        } else if keep(&p) {
            out.push(p);
        }
    }
}

fn is_rust(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "rs")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_where(dir, is_rust, out)
}

/// The texts of the files under `tests/cases` that `keep` accepts (inputs and expected outputs
/// of the CLI's cases: real `PROJECT` files, `main.rs`, module and types files).
fn case_files(keep: fn(&Path) -> bool) -> Vec<String> {
    let mut files = Vec::new();
    files_where(&workspace().join("tests/cases"), keep, &mut files);
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    assert!(!texts.is_empty(), "no seed file under tests/cases");
    texts
}

/// The valid testdata sources and the ui cases, in a stable order.
fn seed_sources() -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&workspace().join("testdata"), &mut files);
    rust_files(&workspace().join("tests/ui"), &mut files);
    // every conformance case and the ui cases seed the inputs
    let mut roots: Vec<PathBuf> = std::fs::read_dir(workspace().join("testdata/conformance"))
        .expect("testdata/conformance")
        .flatten()
        .map(|e| e.path())
        .collect();
    roots.push(workspace().join("tests/ui"));
    let unseeded: Vec<String> = roots
        .iter()
        .filter(|r| !files.iter().any(|f| f.starts_with(r)))
        .map(|r| r.display().to_string())
        .collect();
    assert!(unseeded.is_empty(), "no Rust source read from {unseeded:?}");
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect()
}

/// Every marker line of the seed sources, plus a few of each argument shape.
fn seed_markers(sources: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = sources
        .iter()
        .flat_map(|s| s.lines())
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix("///")
                .or_else(|| l.strip_prefix("//!"))?
                .trim_start();
            rest.starts_with('+').then(|| rest.to_string())
        })
        .collect();
    lines.extend(
        [
            "+kubebuilder:validation:Minimum=-1.5",
            "+kubebuilder:validation:Enum={a,\"b,c\",'d'}",
            "+kubebuilder:default={a: {b: [1, 2]}, c: \"x\"}",
            "+default={\"a\": [1, {\"b\": null}]}",
            "+kubebuilder:validation:XValidation:rule=\"self.a == 'b'\",message=`no`",
            "+kubebuilder:rbac:groups=\"\";apps,resources=pods/status,verbs={get,list}",
            "+kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create;update,versions=v1,name=m.g.io,admissionReviewVersions=v1",
            "+kubebuilder:printcolumn:name=\"A\",type=integer,JSONPath=.spec.a,priority=1",
            "+kubebuilder:validation:items:Pattern=`^[a-z]+$`",
            "+kubebuilder:example={}",
            "+",
            "+kubebuilder:scaffold:imports",
        ]
        .map(str::to_string),
    );
    lines.sort();
    lines.dedup();
    lines
}

fn rounds() -> usize {
    std::env::var("NO_PANIC_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn seed() -> u64 {
    std::env::var("NO_PANIC_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x0BE7_A70B)
}

/// The committed corpus of a fuzz target, in file name order.
fn corpus(target: &str) -> Vec<String> {
    let dir = workspace().join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    files.sort();
    let inputs: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(&std::fs::read(f).expect("read corpus")).into_owned())
        .collect();
    assert!(!inputs.is_empty(), "{} is empty", dir.display());
    inputs
}

/// What went wrong with one input.
struct Failure {
    input: String,
    problem: String,
}

thread_local! {
    /// Set on the worker threads of [`failures`], whose panics are caught and reported.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Silences panic messages on the calling thread only. The panic hook is process-wide and the
/// other tests of this binary run beside these: the hook installed (once) defers to the one it
/// replaced on every other thread, so their panics still print.
fn quiet_panics_on_this_thread() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                previous(info);
            }
        }));
    });
    QUIET.set(true);
}

/// Runs `f` on each input on a worker thread, starting none after [`PER_TARGET`]; returns the
/// inputs that panicked and how many ran, and stops at the first one that takes longer than
/// [`PER_INPUT`].
fn failures(inputs: Vec<String>, f: fn(&str)) -> (Vec<Failure>, usize) {
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let shared = std::sync::Arc::new(inputs);
    let worker_inputs = std::sync::Arc::clone(&shared);
    let started = Instant::now();
    std::thread::spawn(move || {
        quiet_panics_on_this_thread();
        for input in worker_inputs.iter() {
            if started.elapsed() > PER_TARGET {
                return;
            }
            let outcome = catch_unwind(AssertUnwindSafe(|| f(input))).err().map(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            });
            if tx.send(outcome).is_err() {
                return;
            }
        }
    });
    let mut found = Vec::new();
    let mut ran = 0;
    for input in shared.iter() {
        let started = Instant::now();
        let outcome = rx.recv_timeout(PER_INPUT);
        if outcome.is_ok() {
            ran += 1;
        }
        match outcome {
            Ok(None) => {}
            // the worker started no more: the time box is spent
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Ok(Some(message)) => found.push(Failure {
                input: input.clone(),
                problem: format!("panic `{message}`"),
            }),
            Err(_) => {
                found.push(Failure {
                    input: input.clone(),
                    problem: format!("no answer after {:?}", started.elapsed()),
                });
                break;
            }
        }
    }
    (found, ran)
}

fn report(found: &[Failure]) -> String {
    found
        .iter()
        .take(5)
        .map(|f| {
            let shown: String = f.input.chars().take(2000).collect();
            format!("{} on input:\n{shown:?}\n", f.problem)
        })
        .collect()
}

/// Runs `target`'s entry `f` over `inputs` within the time box: no input may panic or hang;
/// prints how many ran.
fn check(target: &str, inputs: Vec<String>, f: fn(&str)) {
    let n = inputs.len();
    let (found, ran) = failures(inputs, f);
    assert!(
        found.is_empty(),
        "{target}: {} of {ran} inputs fail:\n{}",
        found.len(),
        report(&found)
    );
    println!(
        "{target}: {ran} of {n} inputs ran within {PER_TARGET:?}, no panic, each under {PER_INPUT:?}"
    );
}

/// The corpus of `target`, then `seeds`, then `rounds` mutations of seeds picked by `rng`.
fn corpus_seeds_mutations(
    target: &str,
    seeds: &[String],
    rounds: usize,
    rng: &mut Rng,
) -> Vec<String> {
    let mut inputs = corpus(target);
    inputs.extend(seeds.iter().cloned());
    for _ in 0..rounds {
        let seed = rng.pick(seeds).clone();
        inputs.push(mutate(rng, &seed));
    }
    inputs
}

#[test]
fn marker_parser_does_not_panic() {
    let sources = seed_sources();
    let markers = seed_markers(&sources);
    let mut rng = Rng(seed());
    let mut inputs = corpus("marker_line");
    inputs.extend(markers.iter().cloned());
    for _ in 0..rounds() * 2 {
        let m = rng.pick(&markers).clone();
        inputs.push(mutate(&mut rng, &m));
    }
    check("marker_line", inputs, fuzz::marker_line);
}

#[test]
fn scan_and_emitters_do_not_panic() {
    let sources = seed_sources();
    let markers = seed_markers(&sources);
    let mut rng = Rng(seed() ^ 0x5CA7);
    let mut inputs = corpus("scan_source");
    inputs.extend(sources.iter().cloned());
    for _ in 0..rounds() {
        let src = rng.pick(&sources).clone();
        let mutated = if rng.below(3) == 0 {
            // a mutated marker line put in front of a random line of a valid source
            let marker = rng.pick(&markers).clone();
            let marker = mutate(&mut rng, &marker);
            let lines: Vec<&str> = src.lines().collect();
            let at = rng.below(lines.len() + 1);
            let mut out: Vec<String> = lines[..at].iter().map(|l| l.to_string()).collect();
            out.push(format!("/// {}", marker.replace('\n', " ")));
            out.extend(lines[at..].iter().map(|l| l.to_string()));
            out.join("\n")
        } else {
            mutate(&mut rng, &src)
        };
        inputs.push(mutated);
    }
    check("scan_source", inputs, fuzz::scan_source);
}

#[test]
fn scaffold_edits_do_not_panic() {
    let seeds = case_files(is_rust);
    let mut rng = Rng(seed() ^ 0x5CAF);
    let inputs = corpus_seeds_mutations("scaffold_edit", &seeds, rounds(), &mut rng);
    check("scaffold_edit", inputs, fuzz::scaffold_edit);
}

#[test]
fn storage_marker_reader_does_not_panic() {
    // else the entry functions' line checks would be skipped, as under cargo-fuzz
    assert!(fuzz::spans_have_lines(), "parsed Rust carries line numbers");
    let seeds = case_files(|p| is_rust(p) && p.components().any(|c| c.as_os_str() == "api"));
    let mut rng = Rng(seed() ^ 0x5707);
    let inputs = corpus_seeds_mutations("storage_marker", &seeds, rounds(), &mut rng);
    check("storage_marker", inputs, fuzz::storage_marker);
}

#[test]
fn project_parsing_does_not_panic() {
    let seeds = case_files(|p| p.file_name().is_some_and(|n| n == "PROJECT"));
    let mut rng = Rng(seed() ^ 0x960C);
    let inputs = corpus_seeds_mutations("project_file", &seeds, rounds(), &mut rng);
    check("project_file", inputs, fuzz::project_file);
}

/// Review bodies past the nesting serde_json accepts, or large: each must get a review back.
fn hostile_reviews(seeds: &[String]) -> Vec<String> {
    let mut out = vec![
        format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        format!(
            "{{\"request\":{}1{}}}",
            "{\"a\":".repeat(5_000),
            "}".repeat(5_000)
        ),
        format!("[{}]", vec!["{}"; 200_000].join(",")),
        format!("\"{}\"", "x".repeat(4 << 20)),
    ];
    for seed in seeds {
        let depth = 200;
        out.push(seed.replacen(
            "\"object\": {",
            &format!("\"object\": {}{{", "[".repeat(depth)),
            1,
        ));
    }
    out
}

#[test]
fn webhook_handlers_answer_every_body_with_a_review() {
    let seeds = corpus("webhook_review");
    let mut rng = Rng(seed() ^ 0x4EB0);
    let mut inputs = corpus_seeds_mutations("webhook_review", &seeds, rounds(), &mut rng);
    inputs.extend(hostile_reviews(&seeds));
    check("webhook_review", inputs, |body| {
        fuzz::webhook_review(body.as_bytes())
    });
}
