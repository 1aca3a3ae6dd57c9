//! The command reference: every command and subcommand of `operator-gen` with every argument,
//! walked from the clap definitions (the built command, as `--help` sees it).

use clap::{Arg, ArgAction};

use super::page::{cell, generated_note};

/// One command of the CLI as the reference documents it.
pub struct CommandDoc {
    /// The words after `operator-gen`, e.g. `["create", "api"]`; empty for `operator-gen` itself.
    pub path: Vec<String>,
    /// The command, built (bin names, global and generated arguments in place).
    pub command: clap::Command,
}

impl CommandDoc {
    /// The command as typed: `operator-gen create api`.
    pub fn line(&self) -> String {
        std::iter::once("operator-gen")
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The id of its section in the page: its words joined by `-` (`create-api`), or
    /// `operator-gen` for the root.
    pub fn anchor(&self) -> String {
        if self.path.is_empty() {
            "operator-gen".to_string()
        } else {
            self.path.join("-")
        }
    }

    fn about(&self) -> String {
        self.command
            .get_long_about()
            .or(self.command.get_about())
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

    fn short_about(&self) -> String {
        self.command
            .get_about()
            .or(self.command.get_long_about())
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

    /// The arguments the section lists: all but `--help` (every command has it) and, below the
    /// root, the global ones the root lists.
    fn arguments(&self) -> Vec<&Arg> {
        self.command
            .get_arguments()
            .filter(|a| !matches!(a.get_action(), ArgAction::Help | ArgAction::HelpLong))
            .filter(|a| self.path.is_empty() || !a.is_global_set())
            .collect()
    }
}

/// Every command users can call, root first, then depth first in declaration order. Commands
/// hidden from `--help` are included (they can be called); clap's generated `help` subcommands
/// are not (the page says what they do once).
pub fn commands() -> Vec<CommandDoc> {
    let mut root = crate::cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, Vec::new(), &mut out);
    out
}

fn walk(command: &clap::Command, path: Vec<String>, out: &mut Vec<CommandDoc>) {
    out.push(CommandDoc {
        path: path.clone(),
        command: command.clone(),
    });
    for sub in command.get_subcommands() {
        if is_generated_help(command, sub) {
            continue;
        }
        let mut p = path.clone();
        p.push(sub.get_name().to_string());
        walk(sub, p, out);
    }
}

/// clap's `help` subcommand, which it adds to every command with subcommands.
fn is_generated_help(parent: &clap::Command, sub: &clap::Command) -> bool {
    sub.get_name() == "help"
        && parent.has_subcommands()
        && sub.get_arguments().all(|a| {
            a.get_id() == "subcommand"
                || matches!(a.get_action(), ArgAction::Help | ArgAction::HelpLong)
        })
}

/// The command reference page, `docs/src/reference/commands.md`.
pub fn commands_page() -> String {
    let commands = commands();
    let mut out = String::from("# Commands\n\n");
    out.push_str(&generated_note("the CLI's definitions in `cli/src/cli.rs`"));
    out.push_str(
        "\nThis page lists every `operator-gen` command with all its flags and arguments, as \
         `operator-gen <command> --help` prints them. Every command also takes `-h` or `--help`, \
         which prints its help, and `-q` or `--quiet`, which prints only warnings and errors. \
         `operator-gen help <command>` prints the same help as `--help`.\n\n\
         A flag shown as `[=<BOOL>]` may be given alone (`--namespaced`, meaning `true`) or with \
         a value (`--namespaced=false`); the `=` is required.\n\n",
    );
    out.push_str("| Command | What it does |\n|---|---|\n");
    for c in &commands {
        out.push_str(&format!(
            "| [`{}`](#{}) | {} |\n",
            c.line(),
            c.anchor(),
            cell(&c.short_about())
        ));
    }
    for c in &commands {
        out.push('\n');
        section(c, &mut out);
    }
    // each section ends with a blank line; the file ends with one newline
    let end = out.trim_end().len();
    out.truncate(end);
    out.push('\n');
    out
}

fn section(c: &CommandDoc, out: &mut String) {
    out.push_str(&format!("## `{}` {{#{}}}\n\n", c.line(), c.anchor()));
    let mut about = c.about();
    if !about.is_empty() {
        if !about.ends_with(['.', '!', '?']) {
            about.push('.');
        }
        out.push_str(&about);
        out.push_str("\n\n");
    }
    let aliases: Vec<&str> = c.command.get_all_aliases().collect();
    if !aliases.is_empty() {
        out.push_str(&format!("Also called: `{}`.\n\n", aliases.join("`, `")));
    }
    if c.command.is_hide_set() {
        out.push_str("This command is not listed by `--help`.\n\n");
    }
    let usage = c.command.clone().render_usage().to_string();
    out.push_str(&format!("```text\n{}\n```\n", usage.trim_end()));
    let subs: Vec<&clap::Command> = c
        .command
        .get_subcommands()
        .filter(|s| !is_generated_help(&c.command, s))
        .collect();
    if !subs.is_empty() {
        out.push_str("\n| Subcommand | What it does |\n|---|---|\n");
        for s in subs {
            let mut path = c.path.clone();
            path.push(s.get_name().to_string());
            let sub = CommandDoc {
                path,
                command: s.clone(),
            };
            out.push_str(&format!(
                "| [`{}`](#{}) | {} |\n",
                sub.line(),
                sub.anchor(),
                cell(&sub.short_about())
            ));
        }
    }
    let args = c.arguments();
    if args.is_empty() {
        if c.command.get_subcommands().next().is_none() {
            out.push_str("\nIt takes no flags or arguments of its own.\n");
        }
        return;
    }
    out.push_str("\n| Flag or argument | Value | Default | Description |\n|---|---|---|---|\n");
    for arg in args {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            names(arg),
            value(&c.path, arg),
            default(arg),
            description(&c.command, arg)
        ));
    }
}

fn names(arg: &Arg) -> String {
    if arg.is_positional() {
        return format!("`{}`", value_name(arg));
    }
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("`-{s}`"));
    }
    for s in arg.get_short_and_visible_aliases().unwrap_or_default() {
        if Some(s) != arg.get_short() {
            names.push(format!("`-{s}`"));
        }
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("`--{l}`"));
    }
    for l in arg.get_long_and_visible_aliases().unwrap_or_default() {
        if Some(l) != arg.get_long() {
            names.push(format!("`--{l}`"));
        }
    }
    cell(&names.join(", "))
}

fn value_name(arg: &Arg) -> String {
    arg.get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| arg.get_id().as_str().to_ascii_uppercase())
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// The value a flag whose value is optional takes when given alone: what clap parses for
/// `operator-gen <path> --flag` (clap has no getter for it).
fn missing_value(path: &[String], arg: &Arg) -> Option<String> {
    let long = arg.get_long()?;
    let line = std::iter::once("operator-gen".to_string())
        .chain(path.iter().cloned())
        .chain(std::iter::once(format!("--{long}")));
    let mut matches = crate::cli::command()
        .ignore_errors(true)
        .try_get_matches_from(line)
        .ok()?;
    for word in path {
        matches = matches.subcommand_matches(word)?.clone();
    }
    let value = matches.get_raw(arg.get_id().as_str())?.next()?;
    Some(value.to_string_lossy().into_owned())
}

fn value(path: &[String], arg: &Arg) -> String {
    if !takes_value(arg) {
        return "none (a switch)".to_string();
    }
    let name = format!("<{}>", value_name(arg));
    let optional = arg.get_num_args().is_some_and(|r| r.min_values() == 0);
    let mut v = match (optional, arg.get_value_delimiter()) {
        (true, _) => format!("`[={name}]`"),
        (false, Some(d)) => format!("`{name}[{d}{name}...]`"),
        (false, None) => format!("`{name}`"),
    };
    if optional && let Some(missing) = missing_value(path, arg) {
        v.push_str(&format!(", alone: `{missing}`"));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| match p.get_help() {
            Some(h) => format!(
                "`{}` ({})",
                p.get_name(),
                h.to_string().trim_end_matches('.')
            ),
            None => format!("`{}`", p.get_name()),
        })
        .collect();
    let is_bool = possible.len() == 2 && possible.iter().all(|p| p == "`true`" || p == "`false`");
    if !possible.is_empty() && !is_bool {
        v.push_str(&format!(": one of {}", possible.join(", ")));
    }
    cell(&v)
}

fn default(arg: &Arg) -> String {
    if arg.is_required_set() {
        return "required".to_string();
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|d| format!("`{}`", d.to_string_lossy()))
        .collect();
    if defaults.is_empty() || !takes_value(arg) {
        "—".to_string()
    } else {
        cell(&defaults.join(", "))
    }
}

fn description(command: &clap::Command, arg: &Arg) -> String {
    let mut text = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    // clap refuses a conflict both ways, whichever of the two arguments declares it
    let conflicts: Vec<String> = command
        .get_arguments()
        .filter(|other| other.get_id() != arg.get_id())
        .filter(|other| {
            let declared = |a: &Arg, b: &Arg| {
                command
                    .get_arg_conflicts_with(a)
                    .iter()
                    .any(|c| c.get_id() == b.get_id())
            };
            declared(arg, other) || declared(other, arg)
        })
        .map(|other| match other.get_long() {
            Some(l) => format!("`--{l}`"),
            None => format!("`{}`", value_name(other)),
        })
        .collect();
    if !conflicts.is_empty() {
        add_sentence(&mut text, &format!("Not with {}.", conflicts.join(", ")));
    }
    if arg.is_global_set() {
        add_sentence(&mut text, "Accepted by every command.");
    }
    if arg.is_hide_set() {
        add_sentence(&mut text, "Not listed by `--help`.");
    }
    cell(&text)
}

/// Appends `sentence` to `text`, ending `text` with a full stop first (clap drops the full stop
/// of a one-line doc comment).
fn add_sentence(text: &mut String, sentence: &str) {
    if !text.is_empty() && !text.ends_with(['.', '!', '?', ')']) {
        text.push('.');
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(sentence);
}
