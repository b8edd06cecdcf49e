//! Shell words for the commands a conversion writes, and reading them back.

/// One shell word: as it is when it is plainly safe, else single-quoted (as a cloud-config argv
/// command is shown).
pub(super) use crate::document::cloudconfig::shell_quote as quote;

/// Words joined into a command line.
pub(super) fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The words of a line [`join`] could have written: plain words, single-quoted parts and `\'`
/// between them; `None` for anything else (expansions, double quotes, operators).
pub(super) fn split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().filter(|c| *c == '\'')?);
            }
            c if c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c) => {
                in_word = true;
                word.push(c);
            }
            _ => return None,
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_survive_joining_and_splitting() {
        let words: Vec<String> = ["ln", "-sn", "--", "/a b", "it's", "/x"]
            .map(str::to_owned)
            .to_vec();
        let line = join(&words);
        assert_eq!(line, r"ln -sn -- '/a b' 'it'\''s' /x");
        assert_eq!(split(&line), Some(words));
        assert_eq!(split("echo $HOME"), None);
        assert_eq!(split("a && b"), None);
    }
}
