//! kubectl's completion of its plugins (kubectl 1.26 or newer): at `kubectl rke2-payload <TAB>`
//! kubectl runs `kubectl_complete-rke2_payload` from the PATH with the words after the plugin's
//! name, the word being completed last, and reads cobra's `__complete` answer: one candidate a
//! line (`VALUE<TAB>DESCRIPTION`), then `:DIRECTIVE`. The program answers when started under
//! that name or as `rke2-payload __complete WORD…` (what the shipped script runs); the
//! candidates are clap_complete's engine's, from the same command line as `--help`.

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

use clap::CommandFactory as _;

/// The hidden first argument that asks for completions, as cobra's programs take it.
pub(crate) const SUBCOMMAND: &str = "__complete";

/// cobra's `ShellCompDirectiveNoSpace`: no space after the candidate (a folder, `--flag=`).
const NO_SPACE: u8 = 2;
/// cobra's `ShellCompDirectiveNoFileComp`: the shell adds no file names of its own (the
/// engine lists the files where a path is taken).
const NO_FILE_COMP: u8 = 4;

/// Writes the candidates for `words` (the last is the one being completed; none is the empty
/// word) in cobra's protocol. Exits 0 whatever happens: a completion never fails a shell.
pub(crate) fn run(words: Vec<OsString>) -> ExitCode {
    let _ = std::io::stdout().lock().write_all(answer(words).as_bytes());
    ExitCode::SUCCESS
}

/// The answer for `words`: a candidate a line, then the directive.
fn answer(words: Vec<OsString>) -> String {
    let mut args = vec![OsString::from("rke2-payload")];
    args.extend(words);
    if args.len() == 1 {
        args.push(OsString::new());
    }
    let index = args.len() - 1;
    let current = args[index].to_string_lossy().into_owned();
    let here = std::env::current_dir().ok();
    let mut command = crate::cli::Cli::command();
    let candidates = clap_complete::engine::complete(&mut command, args, index, here.as_deref())
        .unwrap_or_default();
    let mut out = String::new();
    let mut directive = NO_FILE_COMP;
    for candidate in candidates.iter().filter(|c| !c.is_hide_set()) {
        let value = candidate.get_value().to_string_lossy();
        // Options once a `-` is typed, as cobra offers them; nothing that would break a line.
        if (value.starts_with('-') && !current.starts_with('-')) || value.contains(['\n', '\t']) {
            continue;
        }
        if value.ends_with(['/', '=']) {
            directive |= NO_SPACE;
        }
        out.push_str(&value);
        if let Some(help) = candidate.get_help() {
            // Its first sentence, on the candidate's line.
            let help = help.to_string();
            let line = help.lines().next().unwrap_or_default();
            let sentence = line.split_once(". ").map_or(line, |(first, _)| first);
            if !sentence.is_empty() {
                out.push('\t');
                out.push_str(sentence);
            }
        }
        out.push('\n');
    }
    out.push_str(&format!(":{directive}\n"));
    out
}
