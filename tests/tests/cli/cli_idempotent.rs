//! Re-running `create api --force` (and `create api` for a controller added later) never
//! duplicates inserted code, and a second run changes nothing on disk.

use operator_gen_tests::cli;

fn ok(dir: &std::path::Path, args: &str) -> cli::Output {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
    out
}

#[test]
fn create_api_force_twice_is_a_no_op() {
    for init in ["init", "init --multigroup"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        ok(&dir, init);
        ok(&dir, "create api --group crew --version v1 --kind Captain");
        ok(
            &dir,
            "create api --group apps --version v1 --kind Deployment --resource=false",
        );
        let first = cli::snapshot(&dir);
        ok(
            &dir,
            "create api --group crew --version v1 --kind Captain --force",
        );
        ok(
            &dir,
            "create api --group crew --version v1 --kind Captain --force",
        );
        ok(
            &dir,
            "create api --group apps --version v1 --kind Deployment --resource=false --force",
        );
        let second = cli::snapshot(&dir);
        assert_eq!(
            first.keys().collect::<Vec<_>>(),
            second.keys().collect::<Vec<_>>(),
            "{init}"
        );
        for (path, bytes) in &first {
            assert_eq!(
                Some(bytes),
                second.get(path),
                "{init}: {path} changed on re-run"
            );
        }
        let main = String::from_utf8_lossy(&second["src/main.rs"]).into_owned();
        assert_eq!(
            main.matches("captain::register(&mut mgr);").count(),
            1,
            "{main}"
        );
        assert_eq!(
            main.matches("deployment::register(&mut mgr);").count(),
            1,
            "{main}"
        );
        let project = String::from_utf8_lossy(&second["PROJECT"]).into_owned();
        assert_eq!(project.matches("kind: Captain").count(), 1, "{project}");
        let crd = String::from_utf8_lossy(&second["config/crd/kustomization.yaml"]).into_owned();
        assert_eq!(
            crd.matches("crew.my.domain_captains.yaml").count(),
            1,
            "{crd}"
        );
    }
}
