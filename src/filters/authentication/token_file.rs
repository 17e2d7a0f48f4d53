//! Static bearer tokens: `--token-auth-file`, a CSV file of `token,user,uid,"group1,group2"`
//! lines, read as kube-apiserver's tokenfile authenticator reads it (at least three columns, an
//! optional fourth with comma-separated groups, empty tokens skipped, the last of duplicate
//! tokens wins).

use std::collections::HashMap;
use std::sync::Arc;

use crate::context::UserInfo;

/// Tokens and the users they authenticate, each user kept as requests see it (with
/// `system:authenticated`) and shared by them: a request with a token allocates no user.
#[derive(Clone, Default)]
pub struct StaticTokens {
    users: HashMap<String, Arc<UserInfo>>,
}

/// Shows how many tokens there are, never the tokens.
impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StaticTokens({} tokens)", self.users.len())
    }
}

/// Why a token file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenFileError {
    /// A line with fewer than three columns.
    #[error("token file must have at least 3 columns (token, user name, user uid), found {0}")]
    TooFewColumns(usize),
    /// A quoted field that never ends.
    #[error("token file line {0}: unterminated quoted field")]
    Unterminated(usize),
}

impl StaticTokens {
    /// Adds one token (a later one replaces an earlier one with the same token).
    pub fn insert(&mut self, token: impl Into<String>, user: UserInfo) {
        self.users
            .insert(token.into(), Arc::new(super::authenticated(user)));
    }

    /// Adds every token of `other` (its users win over ours for the same token).
    pub fn extend(&mut self, other: StaticTokens) {
        self.users.extend(other.users);
    }

    /// The user a token names, `system:authenticated` among its groups.
    pub fn get(&self, token: &str) -> Option<&Arc<UserInfo>> {
        self.users.get(token)
    }

    /// Whether no token is known.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Parses a token file's contents.
    pub fn parse(contents: &str) -> Result<StaticTokens, TokenFileError> {
        let mut tokens = StaticTokens::default();
        for (i, line) in contents.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record = split_csv(line).ok_or(TokenFileError::Unterminated(i + 1))?;
            if record.len() < 3 {
                return Err(TokenFileError::TooFewColumns(record.len()));
            }
            if record[0].is_empty() {
                continue;
            }
            let groups = match record.get(3) {
                Some(g) => g
                    .split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(String::from)
                    .collect(),
                None => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups,
                ..UserInfo::default()
            };
            tokens.insert(record[0].clone(), user);
        }
        Ok(tokens)
    }
}

/// One CSV record as Go's `encoding/csv` reads it with `TrimLeadingSpace`: fields separated by
/// commas, a field may be quoted (`""` inside quotes is one quote). `None` when a quote never
/// closes.
fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next()? {
                    '"' if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    '"' => break,
                    c => field.push(c),
                }
            }
            // Anything between the closing quote and the comma is kept, as Go's lazy mode would.
            while let Some(c) = chars.next_if(|c| *c != ',') {
                field.push(c);
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                field.push(c);
            }
        }
        fields.push(field);
        if chars.next().is_none() {
            return Some(fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("a,b,c", &["a", "b", "c"])]
    #[case("tok, alice, 42, \"g1,g2\"", &["tok", "alice", "42", "g1,g2"])]
    #[case("t,u,\"say \"\"hi\"\"\"", &["t", "u", "say \"hi\""])]
    #[case("t,,", &["t", "", ""])]
    fn csv_fields(#[case] line: &str, #[case] want: &[&str]) {
        assert_eq!(split_csv(line).unwrap(), want);
    }

    #[test]
    fn unterminated_quote_is_refused() {
        assert_eq!(split_csv("t,u,\"open"), None);
        assert_eq!(
            StaticTokens::parse("t,u,\"open").unwrap_err(),
            TokenFileError::Unterminated(1)
        );
    }

    #[test]
    fn tokens_map_to_users_with_groups() {
        let file =
            "secret,alice,uid-1,\"dev, ops\"\n\n,skipped,x\nother,bob,uid-2\nsecret,carol,uid-3\n";
        let tokens = StaticTokens::parse(file).unwrap();
        let carol = tokens.get("secret").unwrap();
        assert_eq!(carol.name, "carol", "the last duplicate wins");
        let bob = tokens.get("other").unwrap();
        assert_eq!(
            (bob.uid.as_str(), bob.groups.as_slice()),
            ("uid-2", ["system:authenticated".to_string()].as_slice())
        );
        let file = "secret,alice,uid-1,\"dev, ops\"";
        let alice = StaticTokens::parse(file)
            .unwrap()
            .get("secret")
            .cloned()
            .unwrap();
        assert_eq!(alice.groups, ["dev", "ops", "system:authenticated"]);
        assert!(StaticTokens::parse(",x,y").unwrap().is_empty());
    }

    #[test]
    fn short_lines_are_refused() {
        assert_eq!(
            StaticTokens::parse("token,user").unwrap_err().to_string(),
            "token file must have at least 3 columns (token, user name, user uid), found 2"
        );
    }
}
