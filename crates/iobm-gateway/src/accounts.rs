//! The gateway's accounts: one key pair (`--access-key`/`--secret-key`), or those of a users
//! file (`--users FILE`: `ACCESS_KEY SECRET_KEY NAME` a line), read at start and again on
//! SIGHUP. s3s looks secrets up here to check signatures; the rest of the gateway knows a
//! caller by its account's name. Secrets are never printed, logged or shown in errors.

use s3s::auth::{S3Auth, SecretKey};
use s3s::{s3_error, S3Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// The name of the one account of a gateway started with a single key pair.
pub const SINGLE: &str = "iobm";
/// Longest account name, in bytes: it is recorded as the owner of every bucket and object the
/// account makes, in an extended attribute beside the object's metadata, and ext4 keeps about
/// 4 KiB of those per file.
pub const MAX_NAME: usize = 512;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// An unsigned request.
    Anonymous,
    /// A signed request of this account (its name).
    Account(String),
}

#[derive(Debug)]
struct Entry {
    name: String,
    secret: SecretKey,
}

/// The accounts, by access key.
#[derive(Debug)]
pub struct Accounts {
    by_key: RwLock<HashMap<String, Entry>>,
    /// Where they were read from (`--users`); `None` for a single key pair.
    file: Option<PathBuf>,
}

impl Accounts {
    /// The one account of a single key pair, named [`SINGLE`].
    pub fn single(access_key: &str, secret_key: &str) -> Accounts {
        let entry = Entry {
            name: SINGLE.into(),
            secret: secret_key.into(),
        };
        Accounts {
            by_key: RwLock::new(HashMap::from([(access_key.to_string(), entry)])),
            file: None,
        }
    }

    /// The accounts of a users file.
    pub fn from_file(path: &Path) -> Result<Accounts, String> {
        Ok(Accounts {
            by_key: RwLock::new(read_file(path)?),
            file: Some(path.to_path_buf()),
        })
    }

    /// Reads the users file again; on an error the accounts stay as they were. Returns how
    /// many there are now.
    pub fn reload(&self) -> Result<usize, String> {
        let Some(path) = &self.file else {
            return Ok(self.len());
        };
        let fresh = read_file(path)?;
        let n = fresh.len();
        *self.by_key.write().unwrap() = fresh;
        Ok(n)
    }

    pub fn len(&self) -> usize {
        self.by_key.read().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether an account of this name exists.
    pub fn has_name(&self, name: &str) -> bool {
        self.by_key.read().unwrap().values().any(|e| e.name == name)
    }

    /// Whether this is a gateway of one account (every bucket is that account's).
    pub fn is_single(&self) -> bool {
        self.file.is_none()
    }

    /// The caller a request's access key names (signatures are checked before this is asked).
    pub fn caller(&self, access_key: Option<&str>) -> Caller {
        match access_key.and_then(|k| self.by_key.read().unwrap().get(k).map(|e| e.name.clone())) {
            Some(name) => Caller::Account(name),
            None => Caller::Anonymous,
        }
    }
}

/// `ACCESS_KEY SECRET_KEY NAME` a line; blank lines and `#` comments are skipped. Names and
/// access keys must be unique; a name is letters, digits, `-`, `_`, `.` and `@`, at most
/// [`MAX_NAME`] bytes.
fn read_file(path: &Path) -> Result<HashMap<String, Entry>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--users {}: {e}", path.display()))?;
    let mut out: HashMap<String, Entry> = HashMap::new();
    let mut names = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("--users {} line {}", path.display(), i + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [key, secret, name] = fields[..] else {
            return Err(format!(
                "{}: expected ACCESS_KEY SECRET_KEY NAME ({} fields found)",
                at(),
                fields.len()
            ));
        };
        let plain = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b))
        };
        if !plain(name) || !plain(key) {
            return Err(format!(
                "{}: an access key and a name are letters, digits, -, _, . and @",
                at()
            ));
        }
        if name.len() > MAX_NAME {
            return Err(format!(
                "{}: the name is {} bytes long; at most {MAX_NAME}",
                at(),
                name.len()
            ));
        }
        if !names.insert(name.to_string()) {
            return Err(format!("{}: the name {name} is given twice", at()));
        }
        let entry = Entry {
            name: name.into(),
            secret: secret.into(),
        };
        if out.insert(key.to_string(), entry).is_some() {
            return Err(format!("{}: the access key {key} is given twice", at()));
        }
    }
    if out.is_empty() {
        return Err(format!("--users {}: no accounts in it", path.display()));
    }
    Ok(out)
}

/// What s3s asks to check a signature.
#[derive(Debug, Clone)]
pub struct Auth(pub Arc<Accounts>);

#[async_trait::async_trait]
impl S3Auth for Auth {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        match self.0.by_key.read().unwrap().get(access_key) {
            Some(e) => Ok(e.secret.clone()),
            None => Err(s3_error!(InvalidAccessKeyId)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_file_names_each_account_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users");
        std::fs::write(
            &path,
            "# accounts\nAK1 secret-one alice\n\nAK2 secret-two bob\n",
        )
        .unwrap();
        let accounts = Accounts::from_file(&path).unwrap();
        assert_eq!(accounts.caller(Some("AK2")), Caller::Account("bob".into()));
        assert_eq!(accounts.caller(Some("AK3")), Caller::Anonymous);
        assert_eq!(accounts.caller(None), Caller::Anonymous);
        assert!(!accounts.is_single());
        // A bad edit is refused and the accounts stay; a good one is taken.
        std::fs::write(&path, "AK1 secret-one alice\nAK9 s alice\n").unwrap();
        let err = accounts.reload().unwrap_err();
        assert!(err.contains("line 2") && err.contains("alice"), "{err}");
        assert_eq!(accounts.len(), 2);
        std::fs::write(&path, "AK3 secret-three carol\n").unwrap();
        assert_eq!(accounts.reload().unwrap(), 1);
        assert_eq!(
            accounts.caller(Some("AK3")),
            Caller::Account("carol".into())
        );
        assert_eq!(accounts.caller(Some("AK1")), Caller::Anonymous);
    }

    #[test]
    fn errors_never_show_a_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users");
        let too_long = format!("AK1 topsecret {}\n", "n".repeat(MAX_NAME + 1));
        for text in [
            "AK1 topsecret\n",
            "AK1 topsecret alice extra\n",
            "AK/1 topsecret a\n",
            &too_long,
        ] {
            std::fs::write(&path, text).unwrap();
            let err = Accounts::from_file(&path).unwrap_err();
            assert!(!err.contains("topsecret"), "{err}");
            assert!(err.contains("line 1"), "{err}");
        }
    }
}
