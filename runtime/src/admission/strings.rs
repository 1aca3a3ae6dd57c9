//! The strings extension as the apiserver has it (cel-go's, version 2): `charAt`, `indexOf`,
//! `lastIndexOf` (with an offset too), `lowerAscii`, `upperAscii`, `replace`, `split`,
//! `substring`, `trim`, `join`, `strings.quote` and `format`. Indices count code points; an
//! offset past the end finds nothing rather than failing, as in the apiserver.

use cel::common::types::{CelInt, CelList, CelString, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::format;
use super::values::error;

fn out_of_range(function: &str, i: i64) -> ExecutionError {
    error(function, format!("index out of range: {i}"))
}

fn runes(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn find(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    (from..=hay.len().checked_sub(needle.len())?).find(|i| hay[*i..*i + needle.len()] == *needle)
}

fn char_at(this: &CelString<'_>, i: &CelInt) -> Result<CelString<'static>, ExecutionError> {
    let (r, i) = (runes(this), *i.inner());
    if i < 0 || i as usize > r.len() {
        return Err(out_of_range("charAt", i));
    }
    Ok(r.get(i as usize)
        .map(char::to_string)
        .unwrap_or_default()
        .into())
}

/// Where `needle` is in `this` from code point `off`: forward (`indexOf`) or, `back`, the
/// last place starting at or before `off` (`lastIndexOf`); -1 when nowhere or `off` is past
/// the end, an error when `off` is negative, as cel-go answers.
fn search(
    function: &str,
    this: &str,
    needle: &str,
    off: i64,
    back: bool,
) -> Result<CelInt, ExecutionError> {
    if off < 0 {
        return Err(out_of_range(function, off));
    }
    let (hay, needle) = (runes(this), runes(needle));
    if needle.is_empty() {
        return Ok(CelInt::from(off.min(hay.len() as i64)));
    }
    if off as usize >= hay.len() || needle.len() > hay.len() {
        return Ok(CelInt::from(-1));
    }
    let found = if back {
        let last = (off as usize).min(hay.len() - needle.len());
        (0..=last)
            .rev()
            .find(|i| hay[*i..*i + needle.len()] == *needle)
    } else {
        find(&hay, &needle, off as usize)
    };
    Ok(CelInt::from(found.map_or(-1, |i| i as i64)))
}

fn index_of_offset(
    this: &CelString<'_>,
    needle: &CelString<'_>,
    off: &CelInt,
) -> Result<CelInt, ExecutionError> {
    search("indexOf", this, needle, *off.inner(), false)
}

fn index_of(this: &CelString<'_>, needle: &CelString<'_>) -> Result<CelInt, ExecutionError> {
    search("indexOf", this, needle, 0, false)
}

fn last_index_of_offset(
    this: &CelString<'_>,
    needle: &CelString<'_>,
    off: &CelInt,
) -> Result<CelInt, ExecutionError> {
    search("lastIndexOf", this, needle, *off.inner(), true)
}

fn last_index_of(this: &CelString<'_>, needle: &CelString<'_>) -> Result<CelInt, ExecutionError> {
    let n = runes(this).len() as i64;
    if needle.is_empty() {
        return Ok(CelInt::from(n));
    }
    if this.len() < needle.len() {
        return Ok(CelInt::from(-1));
    }
    search("lastIndexOf", this, needle, n - 1, true)
}

fn lower_ascii(this: &CelString<'_>) -> CelString<'static> {
    this.to_ascii_lowercase().into()
}

fn upper_ascii(this: &CelString<'_>) -> CelString<'static> {
    this.to_ascii_uppercase().into()
}

fn trim(this: &CelString<'_>) -> CelString<'static> {
    this.trim().to_owned().into()
}

fn replace_n(
    this: &CelString<'_>,
    from: &CelString<'_>,
    to: &CelString<'_>,
    n: &CelInt,
) -> CelString<'static> {
    match usize::try_from(*n.inner()) {
        Ok(n) => this.replacen(from.inner(), to.inner(), n).into(),
        Err(_) => this.replace(from.inner(), to.inner()).into(),
    }
}

fn replace(this: &CelString<'_>, from: &CelString<'_>, to: &CelString<'_>) -> CelString<'static> {
    replace_n(this, from, to, &CelInt::from(-1))
}

fn strings_list(parts: Vec<String>) -> CelList<'static> {
    let items: Vec<Box<dyn Val>> = parts
        .into_iter()
        .map(|p| Box::new(CelString::from(p)) as Box<dyn Val>)
        .collect();
    CelList::from(items)
}

/// Go's `strings.SplitN`: an empty separator splits between code points; `n` < 0 is no limit,
/// 0 no parts.
fn split_n(this: &CelString<'_>, sep: &CelString<'_>, n: &CelInt) -> CelList<'static> {
    let n = *n.inner();
    if n == 0 {
        return strings_list(Vec::new());
    }
    let mut parts: Vec<String> = if sep.is_empty() {
        this.chars().map(String::from).collect()
    } else {
        this.split(sep.inner()).map(str::to_owned).collect()
    };
    if let Ok(n) = usize::try_from(n)
        && parts.len() > n
    {
        let tail = if sep.is_empty() {
            parts[n - 1..].concat()
        } else {
            parts[n - 1..].join(sep.inner())
        };
        parts.truncate(n - 1);
        parts.push(tail);
    }
    strings_list(parts)
}

fn split(this: &CelString<'_>, sep: &CelString<'_>) -> CelList<'static> {
    split_n(this, sep, &CelInt::from(-1))
}

fn substring_range(
    this: &CelString<'_>,
    start: &CelInt,
    end: &CelInt,
) -> Result<CelString<'static>, ExecutionError> {
    let (r, start, end) = (runes(this), *start.inner(), *end.inner());
    if start > end {
        return Err(error(
            "substring",
            format!("invalid substring range. start: {start}, end: {end}"),
        ));
    }
    for i in [start, end] {
        if i < 0 || i as usize > r.len() {
            return Err(out_of_range("substring", i));
        }
    }
    Ok(r[start as usize..end as usize]
        .iter()
        .collect::<String>()
        .into())
}

fn substring(this: &CelString<'_>, start: &CelInt) -> Result<CelString<'static>, ExecutionError> {
    let n = runes(this).len() as i64;
    let s = *start.inner();
    if s < 0 || s > n {
        return Err(out_of_range("substring", s));
    }
    substring_range(this, start, &CelInt::from(n))
}

fn quote(this: &CelString<'_>) -> CelString<'static> {
    format::quoted(this, false).into()
}

/// The strings of a list, for `join`.
fn texts(list: &dyn Val) -> Result<Vec<&str>, ExecutionError> {
    let iterable = list
        .as_iterable()
        .ok_or_else(|| error("join", "not a list"))?;
    let mut iter = iterable.iter();
    let mut out = Vec::new();
    while let Some(item) = iter.next() {
        let s = item
            .downcast_ref::<CelString>()
            .ok_or_else(|| error("join", "not a string"))?;
        out.push(s.inner());
    }
    Ok(out)
}

fn join<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let sep = match args.get(1) {
        Some(s) => s
            .downcast_ref::<CelString>()
            .map(|s| s.inner().to_owned())
            .unwrap_or_default(),
        None => String::new(),
    };
    let list = args
        .first()
        .ok_or_else(|| ExecutionError::invalid_argument_count(1, 0))?;
    Ok(CowVal::owned(CelString::from(
        texts(list.as_ref())?.join(&sep),
    )))
}

fn format_list<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [this, list] = &args[..] else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let this = this
        .downcast_ref::<CelString>()
        .ok_or_else(|| error("format", "not a string"))?;
    let iterable = list
        .as_iterable()
        .ok_or_else(|| error("format", "not a list"))?;
    let mut iter = iterable.iter();
    let mut items = Vec::new();
    while let Some(item) = iter.next() {
        items.push(item);
    }
    let text = format::format(this.inner(), &items).map_err(|e| error("format", e))?;
    Ok(CowVal::owned(CelString::from(text)))
}

/// Registers the strings extension on `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn char_at: (CelString, CelInt) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn index_of: (CelString, CelString) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn index_of_offset: (CelString, CelString, CelInt) -> Result<CelInt>, name = "indexOf")?;
    cel::add_member_overload!(env, fn last_index_of: (CelString, CelString) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn last_index_of_offset: (CelString, CelString, CelInt) -> Result<CelInt>, name = "lastIndexOf")?;
    cel::add_member_overload!(env, fn lower_ascii: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn upper_ascii: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn trim: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn replace: (CelString, CelString, CelString) -> CelString)?;
    cel::add_member_overload!(env, fn replace_n: (CelString, CelString, CelString, CelInt) -> CelString, name = "replace")?;
    cel::add_member_overload!(env, fn split: (CelString, CelString) -> CelList)?;
    cel::add_member_overload!(env, fn split_n: (CelString, CelString, CelInt) -> CelList, name = "split")?;
    cel::add_member_overload!(env, fn substring: (CelString, CelInt) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn substring_range: (CelString, CelInt, CelInt) -> Result<CelString>, name = "substring")?;
    cel::add_overload!(env, fn quote: (CelString) -> CelString, name = "strings.quote")?;
    env.add_member_overload("join", "list_join", LIST_TYPE, vec![], join)?;
    env.add_member_overload(
        "join",
        "list_join_string",
        LIST_TYPE,
        vec![STRING_TYPE],
        join,
    )?;
    env.add_member_overload(
        "format",
        "string_format_list",
        STRING_TYPE,
        vec![LIST_TYPE],
        format_list,
    )?;
    Ok(())
}
