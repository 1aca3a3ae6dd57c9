//! The CEL environment of `x-kubernetes-validations`: CEL's standard library and macros (`has`,
//! `all`, `exists`, `exists_one`, `map`, `filter`), the strings extension (`charAt`,
//! `indexOf`, `lowerAscii`, `replace`, `split`, `substring`, `trim`, `join`, ...),
//! Kubernetes' list functions `isSorted`, `sum`, `min` and `max`, and its checks of strings
//! `isURL`, `isIP`, `isCIDR` and `isQuantity`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use std::net::IpAddr;

use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Program, Value};

use super::formats;

/// The environment every rule compiles and runs in.
pub(crate) fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // a declaration clash would be a bug of this list, caught by its tests
        let _ = env.add_extension(cel::extensions::strings);
        Arc::new(env)
    })
    .clone()
}

/// `source` compiled in [`env`], once per source; the parser's message when it does not compile.
pub(crate) fn compile(source: &str) -> Result<Arc<Program>, String> {
    type Compiled = Result<Arc<Program>, String>;
    static PROGRAMS: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let programs = PROGRAMS.get_or_init(Mutex::default);
    let mut programs = programs.lock().unwrap_or_else(PoisonError::into_inner);
    programs
        .entry(source.to_owned())
        .or_insert_with(|| {
            env()
                .compile(source)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
}

/// A context of [`env`] with Kubernetes' list functions.
pub(crate) fn context() -> Context<'static, 'static> {
    let mut ctx = Context::with_env(env());
    let _ = ctx.add_function("isSorted", |This(list): This<Arc<Vec<Value>>>| {
        sorted(&list)
    });
    let _ = ctx.add_function("sum", |This(list): This<Arc<Vec<Value>>>| sum(&list));
    let _ = ctx.add_function("min", |This(list): This<Arc<Vec<Value>>>| {
        extreme(&list, Ordering::Less, "min")
    });
    let _ = ctx.add_function("max", |This(list): This<Arc<Vec<Value>>>| {
        extreme(&list, Ordering::Greater, "max")
    });
    let _ = ctx.add_function("isURL", |s: Arc<String>| formats::valid("uri", &s));
    let _ = ctx.add_function("isIP", |s: Arc<String>| ip(&s).is_some());
    let _ = ctx.add_function("isCIDR", |s: Arc<String>| cidr(&s));
    let _ = ctx.add_function("isQuantity", |s: Arc<String>| quantity(&s));
    ctx
}

/// An IP address as Kubernetes' `ip` library reads it: no zone, no IPv4-mapped IPv6, no
/// leading zeros.
fn ip(s: &str) -> Option<IpAddr> {
    match s.parse::<IpAddr>().ok()? {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => None,
        addr => Some(addr),
    }
}

/// A CIDR as Kubernetes' `cidr` library reads it: an address of [`ip`] and a prefix length
/// the address family holds, written without leading zeros.
fn cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let canonical =
        bits == "0" || (!bits.starts_with('0') && bits.bytes().all(|b| b.is_ascii_digit()));
    match (ip(addr), bits.parse::<u8>()) {
        (Some(IpAddr::V4(_)), Ok(n)) => canonical && n <= 32,
        (Some(IpAddr::V6(_)), Ok(n)) => canonical && n <= 128,
        _ => false,
    }
}

/// A quantity as Kubernetes parses one: a sign, digits and a fraction (each may be empty), and
/// a binary (`Ki` ... `Ei`), decimal (`n`, `u`, `m`, `k`, `M` ... `E`) or exponent (`e3`)
/// suffix; not empty.
fn quantity(s: &str) -> bool {
    let pattern = r"^[+-]?[0-9]*(\.[0-9]*)?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$";
    !s.is_empty() && formats::regex(pattern).is_some_and(|r| r.is_match(s))
}

fn sorted(list: &[Value]) -> Result<bool, ExecutionError> {
    for pair in list.windows(2) {
        match pair[0].partial_cmp(&pair[1]) {
            Some(Ordering::Greater) => return Ok(false),
            Some(_) => {}
            None => {
                return Err(ExecutionError::function_error(
                    "isSorted",
                    "the list's items cannot be compared",
                ));
            }
        }
    }
    Ok(true)
}

fn sum(list: &[Value]) -> Result<Value, ExecutionError> {
    let mut total = match list.first() {
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::UInt(_)) => Value::UInt(0),
        _ => Value::Int(0),
    };
    for item in list {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => a
                .checked_add(*b)
                .map(Value::Int)
                .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            (Value::UInt(a), Value::UInt(b)) => a
                .checked_add(*b)
                .map(Value::UInt)
                .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => {
                return Err(ExecutionError::function_error(
                    "sum",
                    "the list's items are not numbers of one type",
                ));
            }
        };
    }
    Ok(total)
}

fn extreme(list: &[Value], wanted: Ordering, name: &str) -> Result<Value, ExecutionError> {
    let mut best = list
        .first()
        .cloned()
        .ok_or_else(|| ExecutionError::function_error(name, "the list is empty"))?;
    for item in &list[1..] {
        match item.partial_cmp(&best) {
            Some(o) if o == wanted => best = item.clone(),
            Some(_) => {}
            None => {
                return Err(ExecutionError::function_error(
                    name,
                    "the list's items cannot be compared",
                ));
            }
        }
    }
    Ok(best)
}
