//! The CEL environment of `x-kubernetes-validations`: CEL's standard library and macros (`has`,
//! `all`, `exists`, `exists_one`, `map`, `filter`), the strings extension (`charAt`,
//! `indexOf`, `lowerAscii`, `replace`, `split`, `substring`, `trim`, `join`, `format`,
//! `strings.quote`, ...), the sets extension (`sets.contains`, `sets.equivalent`,
//! `sets.intersects`), and Kubernetes' libraries: lists (`isSorted`, `sum`, `min`, `max`,
//! `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), and the `url`, `ip`, `cidr`,
//! `quantity` and `semver` values of [`url`](super::url), [`net`](super::net),
//! [`quantity`](super::quantity) and [`semver`](super::semver).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cel::common::types::{CelInt, CelList, CelString, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Context, DeclarationError, Env, ExecutionError, Program};

use super::values::error;
use super::{net, quantity, semver, strings, url};

/// A library: it registers its functions and types on an environment.
type Library = fn(&mut Env) -> Result<(), DeclarationError>;

/// The environment every rule compiles and runs in.
pub(crate) fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        let libraries: [Library; 7] = [
            strings::extension,
            lists,
            regex,
            net::extension,
            url::extension,
            quantity::extension,
            semver::extension,
        ];
        for library in libraries {
            // a declaration clash would be a bug of these libraries, caught by their tests
            let _ = env.add_extension(library);
        }
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

/// A context of [`env`].
pub(crate) fn context() -> Context<'static, 'static> {
    Context::with_env(env())
}

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// The items of the list `v`.
fn items<'b, 'v>(v: &'b (dyn Val + 'v)) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let list = v
        .as_iterable()
        .ok_or_else(|| ExecutionError::function_error("list", "not a list"))?;
    let mut iter = list.iter();
    let mut out = Vec::new();
    while let Some(item) = iter.next() {
        out.push(item);
    }
    Ok(out)
}

/// The receiver and the other arguments of a member call.
fn args<'a, 'b, 'v>(
    args: &'a Args<'b, 'v>,
    n: usize,
) -> Result<&'a [CowVal<'b, 'v>], ExecutionError> {
    (args.len() == n)
        .then_some(args.as_slice())
        .ok_or_else(|| ExecutionError::invalid_argument_count(n, args.len()))
}

fn compare(a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| ExecutionError::function_error("compare", "not comparable"))?
        .compare(b)
}

fn is_sorted<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    let list = items(args(&a, 1)?[0].as_ref())?;
    for pair in list.windows(2) {
        if compare(pair[0], pair[1])? == Ordering::Greater {
            return Ok(CowVal::owned(cel::common::types::CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(cel::common::types::CelBool::from(true)))
}

fn sum<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    let list = items(args(&a, 1)?[0].as_ref())?;
    let Some((first, rest)) = list.split_first() else {
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut total: Box<dyn Val + 'v> = first.clone_as_boxed();
    for item in rest {
        let adder = total
            .as_adder()
            .ok_or_else(|| ExecutionError::function_error("sum", "not a number"))?;
        let next = adder.add(*item)?.into_owned();
        total = next;
    }
    Ok(CowVal::Owned(total))
}

/// The least (`wanted` `Less`) or greatest item of a list; an empty list is an error.
fn extreme<'b, 'v>(a: Args<'b, 'v>, wanted: Ordering, name: &str) -> Out<'b, 'v> {
    let list = items(args(&a, 1)?[0].as_ref())?;
    let mut best = *list
        .first()
        .ok_or_else(|| error(name, format!("{name} called on empty list")))?;
    for item in &list[1..] {
        if compare(*item, best)? == wanted {
            best = *item;
        }
    }
    Ok(CowVal::Owned(best.clone_as_boxed()))
}

fn min<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(a, Ordering::Less, "min")
}

fn max<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    extreme(a, Ordering::Greater, "max")
}

/// The index of the first (or, `last`, the last) item equal to the argument, or -1.
fn position<'b, 'v>(a: Args<'b, 'v>, last: bool) -> Out<'b, 'v> {
    let a = args(&a, 2)?;
    let list = items(a[0].as_ref())?;
    let wanted = a[1].as_ref();
    let equal = |i: &usize| list[*i].equals(wanted);
    let found = if last {
        (0..list.len()).rev().find(equal)
    } else {
        (0..list.len()).find(equal)
    };
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

fn index_of<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    position(a, false)
}

fn last_index_of<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    position(a, true)
}

/// Whether some item of `list` equals `v`.
fn has(list: &[&dyn Val], v: &dyn Val) -> bool {
    list.iter().any(|i| i.equals(v))
}

/// `sets.contains`, `sets.equivalent` (`both`) or `sets.intersects` (`any`) of two lists.
fn set_test<'b, 'v>(a: Args<'b, 'v>, test: fn(&[&dyn Val], &[&dyn Val]) -> bool) -> Out<'b, 'v> {
    let a = args(&a, 2)?;
    let (x, y) = (items(a[0].as_ref())?, items(a[1].as_ref())?);
    Ok(CowVal::owned(cel::common::types::CelBool::from(test(
        &x, &y,
    ))))
}

fn sets_contains<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    set_test(a, |x, y| y.iter().all(|v| has(x, *v)))
}

fn sets_equivalent<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    set_test(a, |x, y| {
        y.iter().all(|v| has(x, *v)) && x.iter().all(|v| has(y, *v))
    })
}

fn sets_intersects<'b, 'v>(a: Args<'b, 'v>) -> Out<'b, 'v> {
    set_test(a, |x, y| y.iter().any(|v| has(x, *v)))
}

/// Kubernetes' list library and cel-go's sets extension, on `env`.
fn lists(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_a_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_a_last_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    let two = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        two(),
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        two(),
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        two(),
        sets_intersects,
    )?;
    Ok(())
}

/// Where Go's parser sees the class `[` that `pattern` leaves open: a `[` outside a class
/// opens one, a `]` (but first in it) closes it, escapes are skipped.
fn open_class(pattern: &str) -> usize {
    let (mut open, mut at, mut escaped) = (None, 0, false);
    for (i, c) in pattern.char_indices() {
        match (escaped, c, open) {
            (true, ..) => escaped = false,
            (false, '\\', _) => escaped = true,
            (false, '[', None) => (open, at) = (Some(i), i),
            (false, ']', Some(start)) if i > start + 1 && !pattern[start..i].ends_with("[^") => {
                open = None
            }
            _ => {}
        }
    }
    at
}

/// Rust's regex error `text` for `pattern` worded as Go's `regexp` words it, when it maps to
/// one of Go's: the kind, and the part of the pattern Go quotes.
fn go_regex_error(pattern: &str, text: &str) -> Option<String> {
    // the Display of a parse error: the pattern, a line of `^` under the span, the kind
    let lines: Vec<&str> = text.lines().collect();
    let carets = lines.iter().find(|l| l.trim_start().starts_with('^'))?;
    let start = carets.len() - carets.trim_start().len() - 4;
    let len = carets.trim().len();
    let span: String = pattern.chars().skip(start).take(len).collect();
    let kind = lines.last()?.strip_prefix("error: ")?;
    let (why, quoted) = match kind {
        "unclosed character class" => ("missing closing ]", &pattern[open_class(pattern)..]),
        "unclosed group" => ("missing closing )", pattern),
        "unopened group" => ("unexpected )", pattern),
        "repetition operator missing expression" => {
            ("missing argument to repetition operator", span.as_str())
        }
        "unrecognized escape sequence" => ("invalid escape sequence", span.as_str()),
        k if k.starts_with("invalid character class range") => {
            ("invalid character class range", span.as_str())
        }
        k if k.starts_with("incomplete escape sequence") => {
            ("trailing backslash at end of expression", "")
        }
        k if k.starts_with("invalid repetition count range") => {
            ("invalid repeat count", span.as_str())
        }
        _ => return None,
    };
    Some(format!("{why}: `{quoted}`"))
}

/// `pattern` compiled, or the apiserver's error: `Illegal regex: error parsing regexp: ...`.
fn pattern(function: &str, pattern: &str) -> Result<::regex::Regex, ExecutionError> {
    ::regex::Regex::new(pattern).map_err(|e| {
        let why = go_regex_error(pattern, &e.to_string())
            .unwrap_or_else(|| format!("invalid pattern `{pattern}`"));
        error(
            function,
            format!("Illegal regex: error parsing regexp: {why}"),
        )
    })
}

fn find(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    let re = pattern("find", re)?;
    Ok(re
        .find(this)
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default()
        .into())
}

fn find_all_n(
    this: &CelString<'_>,
    re: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = pattern("findAll", re)?;
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    let found: Vec<Box<dyn Val>> = re
        .find_iter(this)
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(found))
}

fn find_all(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(this, re, &CelInt::from(-1))
}

/// Kubernetes' regex library, on `env`.
fn regex(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>)?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>, name = "findAll")?;
    Ok(())
}
