// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The shared setup of the controller tests in `tests/`: one control plane (etcd and
//! kube-apiserver from `KUBEBUILDER_ASSETS`; `make setup-envtest` provides them) for the tests
//! of a test binary, with the CRDs of `config/crd/bases` installed, and a manager running the
//! controllers a test registers, in the test's process.
//!
//! Without the binaries a test prints `SKIPPED ...; fix: make setup-envtest` and passes; in CI
//! (`CI` set to anything but empty, `0` or `false`) it fails instead.
#![allow(dead_code)] // each test binary uses its share of the helpers

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use k8s_openapi::api::events::v1::Event;
use kube::Client;
use kube::api::{Api, ListParams};
use operator_gen_envtest::ControlPlane;
use operator_gen_runtime::manager::{CancellationToken, Manager, ManagerOptions};
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

/// How a developer gets the control-plane binaries.
pub const FIX: &str =
    "make setup-envtest, or export KUBEBUILDER_ASSETS=$(operator-gen envtest use)";

/// How long a test waits for the controller to get somewhere.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The namespace namespaced test objects are created in.
pub const NAMESPACE: &str = "default";

/// The control plane the running tests of this binary share: started by the first, stopped
/// when the last one still holding it finishes.
static PLANE: tokio::sync::Mutex<Weak<ControlPlane>> = tokio::sync::Mutex::const_new(Weak::new());

/// A test's hold on the shared control plane, with a client of its own.
pub struct TestEnv {
    plane: Arc<ControlPlane>,
    client: Client,
}

impl TestEnv {
    /// The shared control plane with the project's CRDs installed, or `None` when the test is
    /// skipped (no binaries outside CI; in CI that fails the test).
    pub async fn start() -> Option<TestEnv> {
        operator_gen_envtest::require_assets_with(FIX)?;
        let plane = {
            let mut shared = PLANE.lock().await;
            match shared.upgrade() {
                Some(plane) => plane,
                None => {
                    let plane = ControlPlane::start()
                        .await
                        .expect("the control plane starts");
                    let crds = project_dir().join("config/crd/bases");
                    plane
                        .install_crd_dir(&crds, TIMEOUT)
                        .await
                        .expect("the CRDs of config/crd/bases are installed");
                    let plane = Arc::new(plane);
                    *shared = Arc::downgrade(&plane);
                    plane
                }
            }
        };
        let client =
            Client::try_from(plane.config().clone()).expect("a client for the control plane");
        Some(TestEnv { plane, client })
    }

    /// An admin client for the control plane.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The control plane (its kubeconfig, logs and clients for other users).
    pub fn plane(&self) -> &ControlPlane {
        &self.plane
    }

    /// Runs a manager with the controllers `register` adds (no leader election, no metrics or
    /// probe servers) until [`RunningManager::stop`] or its drop.
    pub fn run_manager(&self, register: impl FnOnce(&mut Manager)) -> RunningManager {
        let options = ManagerOptions::default()
            .metrics_bind_address("0")
            .health_probe_bind_address("0")
            .leader_elect(false);
        let mut mgr = Manager::with_client(options, env!("CARGO_PKG_NAME"), self.client())
            .expect("the manager is created");
        register(&mut mgr);
        let token = mgr.shutdown_token();
        RunningManager {
            token,
            task: Some(tokio::spawn(mgr.run())),
        }
    }
}

/// A manager running in the test; cancelled when dropped.
pub struct RunningManager {
    token: CancellationToken,
    task: Option<JoinHandle<operator_gen_runtime::manager::Result<()>>>,
}

impl RunningManager {
    /// Shuts the manager down and checks that it stopped cleanly.
    pub async fn stop(mut self) {
        self.token.cancel();
        if let Some(task) = self.task.take() {
            let result = tokio::time::timeout(TIMEOUT, task)
                .await
                .expect("the manager stops in time")
                .expect("the manager task did not panic");
            result.expect("the manager stopped cleanly");
        }
    }
}

impl Drop for RunningManager {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// The project's directory.
pub fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An object read from `config/samples/<file>`.
pub fn sample<K: DeserializeOwned>(file: &str) -> K {
    let path = project_dir().join("config/samples").join(file);
    operator_gen_envtest::read_yaml(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Polls `check` until it gives a value; fails the test after [`TIMEOUT`], naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {}s for {what}",
            TIMEOUT.as_secs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An event with `reason` about the object with `uid`, if one was recorded.
pub async fn event(client: &Client, uid: &str, reason: &str) -> Option<Event> {
    let events: Api<Event> = Api::all(client.clone());
    let list = events.list(&ListParams::default()).await.ok()?;
    list.items.into_iter().find(|e| {
        e.reason.as_deref() == Some(reason)
            && e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(uid)
    })
}
