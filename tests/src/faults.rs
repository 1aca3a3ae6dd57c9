//! The faults the operator fault tests put between a generated manager and its control plane:
//! a TCP proxy that can be cut (the apiserver unreachable), etcd compaction (a resumed watch
//! then gets `410 Gone`), a kubeconfig pointed at the proxy and the manager's memory read from
//! `/proc`.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// A TCP proxy on a loopback port to `upstream`, each connection copied both ways by two
/// threads. [`cut`](Self::cut) closes every open connection and closes each new one at once
/// (the client sees its connection reset or closed), until [`restore`](Self::restore).
/// Stopped when dropped.
pub struct CutProxy {
    port: u16,
    cut: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    refused: Arc<AtomicU32>,
    accept: Option<JoinHandle<()>>,
}

impl CutProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub fn start(upstream: SocketAddr) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let refused = Arc::new(AtomicU32::new(0));
        let accept = {
            let (cut, stopped, open, refused) =
                (cut.clone(), stopped.clone(), open.clone(), refused.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stopped.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    if cut.load(Ordering::SeqCst) {
                        refused.fetch_add(1, Ordering::SeqCst);
                        let _ = client.shutdown(Shutdown::Both);
                        continue;
                    }
                    let Ok(server) = TcpStream::connect(upstream) else {
                        let _ = client.shutdown(Shutdown::Both);
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let clones = (client.try_clone(), server.try_clone());
                    let (Ok(client_in), Ok(server_in)) = clones else {
                        continue;
                    };
                    {
                        let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
                        open.retain(|s| s.peer_addr().is_ok());
                        if let (Ok(a), Ok(b)) = (client.try_clone(), server.try_clone()) {
                            open.extend([a, b]);
                        }
                        // a cut between the check above and this registration missed it
                        if cut.load(Ordering::SeqCst) {
                            let _ = client.shutdown(Shutdown::Both);
                            let _ = server.shutdown(Shutdown::Both);
                        }
                    }
                    std::thread::spawn(move || pipe(client_in, server));
                    std::thread::spawn(move || pipe(server_in, client));
                }
            })
        };
        CutProxy {
            port,
            cut,
            stopped,
            open,
            refused,
            accept: Some(accept),
        }
    }

    /// The proxy's loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Closes every open connection; new ones are closed at once until [`restore`](Self::restore).
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        for stream in open.drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// How many connections were closed at once while cut.
    pub fn refused(&self) -> u32 {
        self.refused.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.cut();
        // wake the accept loop so it sees `stopped`
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Copies `from` to `to` until either side ends, then shuts both down.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

/// `POST path` with a JSON `body` to etcd's JSON gateway at `etcd_url` (`http://127.0.0.1:<port>`);
/// the JSON answer, or why there is none.
pub fn etcd_post(etcd_url: &str, path: &str, body: &Value) -> Result<Value, String> {
    let address = etcd_url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not a plain-HTTP etcd URL: {etcd_url}"))?;
    let mut stream = TcpStream::connect(address).map_err(|e| format!("etcd {address}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| e.to_string())?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP response from etcd: {response}"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("etcd POST {path}: {head}\n{body}"));
    }
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        crate::operator::dechunk(body)
    } else {
        body.to_owned()
    };
    serde_json::from_str(&body).map_err(|e| format!("etcd POST {path}: {e}: {body}"))
}

/// Compacts etcd at its current revision, physically (`POST /v3/kv/compaction`): every older
/// revision is gone, so a watch resumed from one gets `410 Gone`. Returns the revision.
pub fn compact_etcd(etcd_url: &str) -> Result<i64, String> {
    // any range answers with the store's current revision in its header
    let range = etcd_post(
        etcd_url,
        "/v3/kv/range",
        &serde_json::json!({ "key": "AA==", "limit": 1 }),
    )?;
    let revision: i64 = range["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| format!("no revision in etcd's answer: {range}"))?;
    etcd_post(
        etcd_url,
        "/v3/kv/compaction",
        &serde_json::json!({ "revision": revision.to_string(), "physical": true }),
    )?;
    Ok(revision)
}

/// Points every cluster of the kubeconfig at `path` to `server` (e.g. a [`CutProxy`] in front
/// of the apiserver; the apiserver's certificate names 127.0.0.1, so TLS still verifies).
pub fn redirect_kubeconfig(path: &Path, server: &str) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut config: Value = serde_saphyr::from_str(&text).expect("the kubeconfig is YAML");
    for cluster in config["clusters"].as_array_mut().expect("clusters") {
        cluster["cluster"]["server"] = Value::from(server);
    }
    let json = serde_json::to_string_pretty(&config).expect("kubeconfig json");
    std::fs::write(path, json).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// A process's memory from `/proc/<pid>/status`, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss_kib: u64,
    /// `VmHWM`: the most it was ever resident.
    pub peak_kib: u64,
}

/// The memory of process `pid`, or why it cannot be read.
pub fn memory(pid: u32) -> Result<Memory, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    parse_status(&text).ok_or_else(|| format!("{path} has no VmRSS and VmHWM"))
}

fn parse_status(text: &str) -> Option<Memory> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        peak_kib: field("VmHWM:")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_memory_is_read() {
        let status = "Name:\tmanager\nVmPeak:\t  900 kB\nVmHWM:\t   5120 kB\nVmRSS:\t   4096 kB\n";
        assert_eq!(
            parse_status(status),
            Some(Memory {
                rss_kib: 4096,
                peak_kib: 5120
            })
        );
        assert_eq!(parse_status("VmRSS:\t1 kB\n"), None);
    }

    #[test]
    fn own_memory_is_read() {
        let own = memory(std::process::id()).expect("own memory");
        assert!(own.rss_kib > 0 && own.peak_kib >= own.rss_kib, "{own:?}");
    }

    #[test]
    fn a_cut_proxy_closes_connections_until_restored() {
        let upstream = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = upstream.local_addr().expect("address");
        std::thread::spawn(move || {
            for stream in upstream.incoming() {
                let Ok(mut stream) = stream else { continue };
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 64];
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 || stream.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        let proxy = CutProxy::start(address);
        let echo = |stream: &mut TcpStream| -> bool {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut answer = [0u8; 4];
            stream.write_all(b"ping").is_ok()
                && stream.read_exact(&mut answer).is_ok()
                && &answer == b"ping"
        };
        let mut open = TcpStream::connect(("127.0.0.1", proxy.port())).expect("connect");
        assert!(echo(&mut open), "the proxy forwards");
        proxy.cut();
        assert!(!echo(&mut open), "an open connection survived the cut");
        let mut new = TcpStream::connect(("127.0.0.1", proxy.port())).expect("connect");
        assert!(!echo(&mut new), "a new connection got through the cut");
        proxy.restore();
        let mut again = TcpStream::connect(("127.0.0.1", proxy.port())).expect("connect");
        assert!(echo(&mut again), "the restored proxy forwards");
        assert!(proxy.refused() >= 1);
    }
}
