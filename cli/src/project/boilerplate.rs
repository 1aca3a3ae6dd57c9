//! The license header of generated Rust files: chosen by `init`, kept in
//! `hack/boilerplate.rs.txt` for the later commands.

use std::path::Path;

use clap::ValueEnum;

/// Where `init` keeps the license header for later commands.
pub const BOILERPLATE: &str = "hack/boilerplate.rs.txt";

/// The license header put on generated source files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum License {
    /// Apache License 2.0.
    #[default]
    Apache2,
    /// No header.
    None,
}

/// The project's license header at `root` as `init` kept it; empty when it is missing.
pub fn read(root: &Path) -> crate::error::Result<String> {
    Ok(crate::gate::read_text(&root.join(BOILERPLATE))?.unwrap_or_default())
}

/// The license header of a generated Rust file: `//` lines and a blank line, or nothing.
pub fn rust_header(license: License, owner: Option<&str>, year: i32) -> String {
    match license {
        License::None => String::new(),
        License::Apache2 => {
            let copyright = match owner {
                Some(o) if !o.trim().is_empty() => format!("Copyright {year} {}.", o.trim()),
                _ => format!("Copyright {year}."),
            };
            apache2_header(&copyright)
        }
    }
}

/// The Apache 2.0 header under the line `copyright`, as `//` lines and a blank line.
pub fn apache2_header(copyright: &str) -> String {
    let text = [
        copyright,
        "",
        "Licensed under the Apache License, Version 2.0 (the \"License\");",
        "you may not use this file except in compliance with the License.",
        "You may obtain a copy of the License at",
        "",
        "    http://www.apache.org/licenses/LICENSE-2.0",
        "",
        "Unless required by applicable law or agreed to in writing, software",
        "distributed under the License is distributed on an \"AS IS\" BASIS,",
        "WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.",
        "See the License for the specific language governing permissions and",
        "limitations under the License.",
    ]
    .join("\n");
    let mut out: String = text
        .lines()
        .map(|l| {
            if l.is_empty() {
                "//\n".to_owned()
            } else {
                format!("// {l}\n")
            }
        })
        .collect();
    out.push('\n');
    out
}

/// The current year (UTC), or `OPERATOR_GEN_YEAR` when set (reproducible output).
pub fn current_year() -> i32 {
    if let Some(y) = std::env::var("OPERATOR_GEN_YEAR")
        .ok()
        .and_then(|y| y.parse().ok())
    {
        return y;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Days since 1970-01-01 to a civil year (Howard Hinnant's algorithm).
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2)) as i32
}
