//! The CEL environment of `x-kubernetes-validations`: CEL's standard library and macros (`has`,
//! `all`, `exists`, `exists_one`, `map`, `filter`), the strings extension (`charAt`,
//! `indexOf`, `lowerAscii`, `replace`, `split`, `substring`, `trim`, `join`, ...), and
//! Kubernetes' list functions `isSorted`, `sum`, `min` and `max`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Program, Value};

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
    ctx
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
