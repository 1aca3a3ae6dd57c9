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

//! The demo manager: parses its flags, serves health probes and metrics (HTTPS on
//! :8443 to callers allowed to get /metrics, unless --metrics-secure=false), runs the
//! controllers behind leader election and shuts down gracefully on SIGTERM.

use clap::Parser;
use operator_gen_runtime::manager::{Manager, ManagerOptions};
use tracing_subscriber::EnvFilter;

/// The manager's command line.
#[derive(Debug, Parser)]
#[command(name = "manager", version, about = "Runs the demo controllers")]
struct Cli {
    #[command(flatten)]
    manager: ManagerOptions,
}

// One thread runs every task: an operator mostly waits on the API server, and one thread keeps
// its memory small (one allocator arena and cache). Reconciles still run concurrently; for
// reconciles that compute a lot, use `#[tokio::main]` (a thread per core) instead.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let cli = Cli::parse();

    #[allow(unused_mut)] // controllers added at the scaffold marker borrow it mutably
    let mut mgr = Manager::new(cli.manager, "demo").await?;
    // +operator-gen:scaffold:controllers

    tracing::info!("starting manager");
    mgr.run().await?;
    Ok(())
}
