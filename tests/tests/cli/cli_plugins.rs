//! The autoupdate and grafana plugins beyond their goldens (`edit-autoupdate`, `edit-grafana`):
//! `hack/auto-update.sh`, as the workflow runs it, in a project of the older operator-gen
//! ([`older`]) with a local bare repository as its remote and `gh` replaced by a stub that
//! records its arguments: a real `alpha update` to this operator-gen, its branch pushed, and a
//! pull request for a clean merge or an issue listing the conflicted files; nothing done when the
//! remote has the branch already or the project is on this operator-gen's scaffold. Both
//! plugins replayed by `alpha generate`, and run again over the user's edits.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use operator_gen_tests::{cli, older};

use super::cli_alpha::{OLD_IMG, TODO, USER_CODE, USER_IMG, merge_branch, replace, run_with};
use operator_gen_tests::cli::git;

const OLDER: &str = older::VERSION;
const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// `gh` as the tests see it: every call's arguments, NUL-separated, each call ended by `\x1e`,
/// appended to `$GH_LOG`.
const GH_STUB: &str = "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$GH_LOG\"; done\nprintf '\\036' >> \"$GH_LOG\"\n";

/// A project with the autoupdate plugin, pushed to a bare remote, and the stubs' directory.
struct Remote {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    remote: PathBuf,
    bin: PathBuf,
    log: PathBuf,
}

/// `init`, Captain and `edit --plugins autoupdate` by `scaffolder`, committed on `main` with
/// `edits` committed after, and pushed to a bare repository, the project's `origin`.
fn remote(scaffolder: &Path, edits: &[(&str, &str, &str)]) -> Remote {
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().join("demo");
    std::fs::create_dir_all(&project).expect("mkdir");
    for args in [
        "init --domain example.com --project-name demo",
        "create api --group crew --version v1 --kind Captain",
        "edit --plugins autoupdate",
    ] {
        let out = run_with(scaffolder, &project, args);
        assert_eq!(out.code, 0, "`{args}` failed: {}", out.stderr);
    }
    git(&project, &["init", "--quiet", "--initial-branch", "main"]);
    git(&project, &["config", "user.name", "Crew"]);
    git(&project, &["config", "user.email", "crew@example.com"]);
    git(&project, &["config", "commit.gpgsign", "false"]);
    git(&project, &["add", "--all"]);
    git(&project, &["commit", "--quiet", "-m", "scaffold"]);
    for (rel, from, to) in edits {
        replace(&project, rel, from, to);
    }
    if !edits.is_empty() {
        git(
            &project,
            &["commit", "--quiet", "--all", "-m", "the crew's changes"],
        );
    }
    let remote = tmp.path().join("remote.git");
    git(tmp.path(), &["init", "--quiet", "--bare", "remote.git"]);
    git(
        &project,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    git(&project, &["push", "--quiet", "origin", "main"]);
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    std::fs::write(bin.join("gh"), GH_STUB).expect("write the gh stub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the gh stub");
        std::os::unix::fs::symlink(cli::operator_gen_bin(), bin.join("operator-gen"))
            .expect("link operator-gen");
    }
    let log = tmp.path().join("gh.log");
    Remote {
        _tmp: tmp,
        project,
        remote,
        bin,
        log,
    }
}

/// `bash hack/auto-update.sh args...` with the stubs first on PATH.
fn auto_update(r: &Remote, args: &[&str]) -> cli::Output {
    let path = std::env::var("PATH").unwrap_or_default();
    let out = Command::new("bash")
        .arg("hack/auto-update.sh")
        .args(args)
        .current_dir(&r.project)
        .env("PATH", format!("{}:{path}", r.bin.display()))
        .env("GH_LOG", &r.log)
        .env("OPERATOR_GEN_YEAR", cli::YEAR)
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    cli::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// The calls the gh stub recorded, each as its arguments.
fn gh_calls(r: &Remote) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(&r.log).unwrap_or_default();
    text.split('\x1e')
        .filter(|call| !call.is_empty())
        .map(|call| {
            call.trim_end_matches('\0')
                .split('\0')
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The branches of the remote.
fn remote_branches(r: &Remote) -> Vec<String> {
    git(&r.remote, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs the script with `--from-binary older`, which must succeed, push the merge branch and
/// call `gh` once; returns that call's arguments.
fn proposed(r: &Remote, older: &Path) -> Vec<String> {
    let out = auto_update(r, &["--from-binary", &older.display().to_string()]);
    assert_eq!(
        out.code, 0,
        "auto-update failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(remote_branches(r), ["main".to_owned(), merge_branch()]);
    let mut calls = gh_calls(r);
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls.remove(0)
}

fn title() -> String {
    format!("Update the scaffold from operator-gen {OLDER} to {CURRENT}")
}

#[test]
fn auto_update_opens_a_pull_request_for_a_clean_merge() {
    let Some(older) = older::operator_gen() else {
        return;
    };
    let r = remote(older, &[("src/controller/captain.rs", TODO, USER_CODE)]);
    let older_arg = older.display().to_string();
    let call = proposed(&r, older);
    let branch = merge_branch();
    assert_eq!(
        call[..8],
        [
            "pr",
            "create",
            "--base",
            "main",
            "--head",
            &branch,
            "--title",
            &title()
        ],
        "{call:?}"
    );
    assert_eq!(call[8], "--body");
    assert!(call[9].contains("without conflicts"), "{call:?}");
    // the pushed branch: the user's code, the new scaffold, the plugin replayed
    let show = |rel: &str| git(&r.remote, &["show", &format!("{branch}:{rel}")]);
    assert!(show("src/controller/captain.rs").contains(USER_CODE));
    let project = show("PROJECT");
    assert!(
        project.contains(&format!("cliVersion: {CURRENT}")),
        "{project}"
    );
    assert!(
        project.contains("autoupdate.operator-gen.io/v1-alpha: {}"),
        "{project}"
    );
    assert!(show(".github/workflows/auto_update.yml").contains("bash hack/auto-update.sh"));
    assert!(!show("Makefile").contains("<<<<<<<"));

    // a second run finds the branch on the remote and proposes nothing again
    git(&r.project, &["checkout", "--quiet", "main"]);
    let again = auto_update(&r, &["--from-binary", &older_arg]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains(&format!("origin has {branch} from an earlier run")),
        "{}",
        again.stdout
    );
    assert_eq!(gh_calls(&r).len(), 1);
}

#[test]
fn auto_update_opens_an_issue_listing_the_conflicts() {
    let Some(older) = older::operator_gen() else {
        return;
    };
    let r = remote(
        older,
        &[
            ("src/controller/captain.rs", TODO, USER_CODE),
            ("Makefile", OLD_IMG, USER_IMG),
        ],
    );
    let call = proposed(&r, older);
    let branch = merge_branch();
    assert_eq!(
        call[..4],
        [
            "issue",
            "create",
            "--title",
            &format!("{}: conflicts to resolve", title())
        ],
        "{call:?}"
    );
    assert_eq!(call[4], "--body");
    let listed: Vec<&str> = call[5].lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(listed, ["- `Makefile`"], "{}", call[5]);
    assert!(
        call[5].contains(&format!("on branch `{branch}`")),
        "{}",
        call[5]
    );
    let makefile = git(&r.remote, &["show", &format!("{branch}:Makefile")]);
    assert!(
        makefile.contains("<<<<<<<") && makefile.contains(USER_IMG),
        "{makefile}"
    );
}

#[test]
fn auto_update_does_nothing_on_the_current_scaffold() {
    if !cli::require_tool("git", &["--version"], "apt-get install git") {
        return;
    }
    let r = remote(cli::operator_gen_bin(), &[]);
    let out = auto_update(&r, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains(&format!("on operator-gen {CURRENT}'s scaffold already")),
        "{}",
        out.stdout
    );
    assert_eq!(gh_calls(&r), Vec::<Vec<String>>::new());
    assert_eq!(remote_branches(&r), ["main"]);
}

/// `alpha generate` replays both plugins: the workflow, its script, the dashboards (the custom
/// one from the project's configuration) and PROJECT are the project's.
#[test]
fn generate_replays_the_autoupdate_and_grafana_plugins() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let bin = cli::operator_gen_bin();
    for args in [
        "init --domain example.com",
        "edit --plugins autoupdate,grafana",
    ] {
        let out = run_with(bin, &dir, args);
        assert_eq!(out.code, 0, "`{args}` failed: {}", out.stderr);
    }
    std::fs::write(
        dir.join("grafana/custom-metrics/config.yaml"),
        "customMetrics:\n  - metric: crew_voyages_total\n    type: counter\n",
    )
    .expect("write the configuration");
    let out = run_with(bin, &dir, "edit --plugins grafana");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_with(bin, &dir, "alpha generate --output-dir ../out");
    assert_eq!(out.code, 0, "alpha generate failed: {}", out.stderr);
    for said in [
        "replay operator-gen edit --plugins autoupdate",
        "replay copy grafana/custom-metrics/config.yaml",
        "replay operator-gen edit --plugins grafana",
    ] {
        assert!(
            out.stderr.contains(said),
            "{said:?} missing:\n{}",
            out.stderr
        );
    }
    let input = cli::snapshot(&dir);
    let output = cli::snapshot(&tmp.path().join("out"));
    for rel in [
        "PROJECT",
        ".github/workflows/auto_update.yml",
        "hack/auto-update.sh",
        "grafana/controller-runtime-metrics.json",
        "grafana/custom-metrics/config.yaml",
        "grafana/custom-metrics/custom-metrics-dashboard.json",
    ] {
        assert!(input.contains_key(rel), "{rel} not in the project");
        assert_eq!(output.get(rel), input.get(rel), "{rel}");
    }
}

/// A second `edit --plugins autoupdate,grafana` changes nothing; after the user edits the
/// workflow and the configuration, another one writes the workflow again, keeps the
/// configuration and adds the custom dashboard; once the configuration lists no metric, the
/// custom dashboard is removed.
#[test]
fn edit_again_rewrites_the_plugins_files_and_keeps_the_configuration() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let bin = cli::operator_gen_bin();
    let edit = |dir: &Path| {
        let out = run_with(bin, dir, "edit --plugins autoupdate,grafana");
        assert_eq!(out.code, 0, "edit failed: {}", out.stderr);
    };
    let out = run_with(bin, &dir, "init --domain example.com");
    assert_eq!(out.code, 0, "{}", out.stderr);
    edit(&dir);
    let first = cli::snapshot(&dir);
    edit(&dir);
    assert_eq!(cli::snapshot(&dir), first);

    let workflow = ".github/workflows/auto_update.yml";
    let config = "grafana/custom-metrics/config.yaml";
    let custom = "grafana/custom-metrics/custom-metrics-dashboard.json";
    std::fs::write(dir.join(workflow), "name: mine\n").expect("edit the workflow");
    let listed = "customMetrics:\n  - metric: crew_voyages_total\n    type: counter\n";
    std::fs::write(dir.join(config), listed).expect("edit the configuration");
    edit(&dir);
    let second = cli::snapshot(&dir);
    assert_eq!(second.get(workflow), first.get(workflow));
    assert_eq!(
        second.get(config).map(Vec::as_slice),
        Some(listed.as_bytes())
    );
    let dashboard = String::from_utf8_lossy(second.get(custom).expect("the custom dashboard"));
    assert!(dashboard.contains("crew_voyages_total{job="), "{dashboard}");

    std::fs::write(dir.join(config), "customMetrics: []\n").expect("empty the configuration");
    edit(&dir);
    assert!(!dir.join(custom).exists(), "{custom} stayed");
}
