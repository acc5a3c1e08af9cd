//! Explicit grants, beside the canned ACLs: `x-amz-grant-read`, `-write`, `-read-acp`,
//! `-write-acp` and `-full-control` headers and access-control-policy bodies, to an account
//! (`id="NAME"`) or a group (all users, authenticated users). Kept in the same attribute as a
//! canned ACL, as `grants:PERMISSION=id:NAME;PERMISSION=uri:GROUP;...`, so everything that
//! carries an ACL (an upload awaiting completion, a copy) carries these as well.

use crate::accounts::Caller;
use s3s::dto::{AccessControlPolicy, Grant, Grantee, Permission, Type};
use s3s::{s3_error, S3Result};

/// What an ACL attribute holding explicit grants starts with.
pub const PREFIX: &str = "grants:";
/// The URIs of S3's groups.
pub const ALL_USERS: &str = "http://acs.amazonaws.com/groups/global/AllUsers";
pub const AUTHENTICATED_USERS: &str = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
/// Most grants one ACL holds (S3's limit).
pub const MAX_GRANTS: usize = 100;

/// What a grant permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perm {
    Read,
    Write,
    ReadAcp,
    WriteAcp,
    FullControl,
}

impl Perm {
    const ALL: [(Perm, &'static str); 5] = [
        (Perm::Read, Permission::READ),
        (Perm::Write, Permission::WRITE),
        (Perm::ReadAcp, Permission::READ_ACP),
        (Perm::WriteAcp, Permission::WRITE_ACP),
        (Perm::FullControl, Permission::FULL_CONTROL),
    ];

    pub fn name(self) -> &'static str {
        Perm::ALL
            .iter()
            .find(|(p, _)| *p == self)
            .map(|(_, n)| *n)
            .unwrap_or_default()
    }

    fn parse(name: &str) -> Option<Perm> {
        Perm::ALL.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
    }
}

/// Who a grant is to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    Account(String),
    AllUsers,
    AuthenticatedUsers,
}

impl Who {
    fn reaches(&self, caller: &Caller) -> bool {
        match (self, caller) {
            (Who::AllUsers, _) => true,
            (Who::AuthenticatedUsers, Caller::Account(_)) => true,
            (Who::Account(name), Caller::Account(c)) => name == c,
            _ => false,
        }
    }

    fn from_uri(uri: &str) -> S3Result<Who> {
        match uri {
            ALL_USERS => Ok(Who::AllUsers),
            AUTHENTICATED_USERS => Ok(Who::AuthenticatedUsers),
            _ => Err(s3_error!(
                InvalidArgument,
                "the group {uri} is not one kept here (AllUsers, AuthenticatedUsers)"
            )),
        }
    }
}

/// A set of explicit grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explicit(pub Vec<(Perm, Who)>);

impl Explicit {
    /// The grants of an ACL attribute's value, if it holds explicit grants.
    pub fn decode(acl: &str) -> Option<Explicit> {
        let list = acl.strip_prefix(PREFIX)?;
        let grants = list
            .split(';')
            .filter(|g| !g.is_empty())
            .filter_map(|g| {
                let (perm, who) = g.split_once('=')?;
                let who = match who.split_once(':')? {
                    ("id", name) => Who::Account(name.to_string()),
                    ("uri", "AllUsers") => Who::AllUsers,
                    ("uri", "AuthenticatedUsers") => Who::AuthenticatedUsers,
                    _ => return None,
                };
                Some((Perm::parse(perm)?, who))
            })
            .collect();
        Some(Explicit(grants))
    }

    /// The attribute's value.
    pub fn encode(&self) -> String {
        let mut out = String::from(PREFIX);
        for (perm, who) in &self.0 {
            let who = match who {
                Who::Account(name) => format!("id:{name}"),
                Who::AllUsers => "uri:AllUsers".into(),
                Who::AuthenticatedUsers => "uri:AuthenticatedUsers".into(),
            };
            out.push_str(&format!("{}={who};", perm.name()));
        }
        out
    }

    /// Whether a grant gives `caller` `perm` (FULL_CONTROL gives every permission).
    pub fn allows(&self, caller: &Caller, perm: Perm) -> bool {
        self.0
            .iter()
            .any(|(p, who)| (*p == perm || *p == Perm::FullControl) && who.reaches(caller))
    }

    /// The grants as S3 lists them.
    pub fn listed(&self) -> Vec<Grant> {
        self.0
            .iter()
            .map(|(perm, who)| {
                let grantee = match who {
                    Who::Account(name) => Grantee {
                        display_name: Some(name.clone()),
                        id: Some(name.clone()),
                        type_: Type::from_static(Type::CANONICAL_USER),
                        email_address: None,
                        uri: None,
                    },
                    Who::AllUsers | Who::AuthenticatedUsers => Grantee {
                        type_: Type::from_static(Type::GROUP),
                        uri: Some(
                            if *who == Who::AllUsers {
                                ALL_USERS
                            } else {
                                AUTHENTICATED_USERS
                            }
                            .to_string(),
                        ),
                        display_name: None,
                        email_address: None,
                        id: None,
                    },
                };
                Grant {
                    grantee: Some(grantee),
                    permission: Some(Permission::from(perm.name().to_string())),
                }
            })
            .collect()
    }

    /// The grants of `x-amz-grant-*` headers: each a comma-separated list of `id="NAME"` and
    /// `uri="GROUP"` (`emailAddress` is not kept here). `known` says whether an account exists.
    pub fn from_headers(
        headers: [(Perm, Option<&str>); 5],
        known: &dyn Fn(&str) -> bool,
    ) -> S3Result<Option<Explicit>> {
        let mut out = Vec::new();
        for (perm, value) in headers {
            let Some(value) = value else { continue };
            for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (kind, v) = item.split_once('=').ok_or_else(|| {
                    s3_error!(InvalidArgument, "a grant is type=\"value\": {item}")
                })?;
                let v = v.trim().trim_matches('"');
                let who = match kind.trim() {
                    "id" => account(v, known)?,
                    "uri" => Who::from_uri(v)?,
                    "emailAddress" => {
                        return Err(s3_error!(
                            NotImplemented,
                            "grants by email address are not kept here: use id=\"ACCOUNT\""
                        ))
                    }
                    other => {
                        return Err(s3_error!(InvalidArgument, "unknown grantee type {other}"))
                    }
                };
                out.push((perm, who));
            }
        }
        if out.len() > MAX_GRANTS {
            return Err(s3_error!(InvalidArgument, "at most {MAX_GRANTS} grants"));
        }
        Ok((!out.is_empty()).then_some(Explicit(out)))
    }

    /// The grants of an access-control-policy body (the owner's own full control, which S3
    /// lists in every ACL, is implied and dropped).
    pub fn from_policy(
        policy: &AccessControlPolicy,
        owner: Option<&str>,
        known: &dyn Fn(&str) -> bool,
    ) -> S3Result<Explicit> {
        let mut out = Vec::new();
        for grant in policy.grants.iter().flatten() {
            let perm = grant
                .permission
                .as_ref()
                .and_then(|p| Perm::parse(p.as_str()))
                .ok_or_else(|| s3_error!(MalformedACLError, "a grant has no valid Permission"))?;
            let grantee = grant
                .grantee
                .as_ref()
                .ok_or_else(|| s3_error!(MalformedACLError, "a grant has no Grantee"))?;
            let who = if let Some(uri) = &grantee.uri {
                Who::from_uri(uri)?
            } else if let Some(id) = &grantee.id {
                account(id, known)?
            } else if grantee.email_address.is_some() {
                return Err(s3_error!(
                    NotImplemented,
                    "grants by email address are not kept here: use an ID"
                ));
            } else {
                return Err(s3_error!(MalformedACLError, "a Grantee names no ID or URI"));
            };
            if perm == Perm::FullControl && owner.is_some_and(|o| who == Who::Account(o.into())) {
                continue;
            }
            out.push((perm, who));
        }
        if out.len() > MAX_GRANTS {
            return Err(s3_error!(InvalidArgument, "at most {MAX_GRANTS} grants"));
        }
        Ok(Explicit(out))
    }
}

fn account(name: &str, known: &dyn Fn(&str) -> bool) -> S3Result<Who> {
    if name.is_empty() || name.contains([';', '=']) || !known(name) {
        return Err(s3_error!(
            InvalidArgument,
            "Invalid id: {name} is not an account of this gateway"
        ));
    }
    Ok(Who::Account(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_become_grants_that_reach_exactly_their_grantees() {
        let known = |n: &str| n == "bob" || n == "carol";
        let g = Explicit::from_headers(
            [
                (Perm::Read, Some("id=\"bob\", uri=\"http://acs.amazonaws.com/groups/global/AuthenticatedUsers\"")),
                (Perm::Write, Some("id=\"carol\"")),
                (Perm::ReadAcp, None),
                (Perm::WriteAcp, None),
                (Perm::FullControl, None),
            ],
            &known,
        )
        .unwrap()
        .unwrap();
        let bob = Caller::Account("bob".into());
        let carol = Caller::Account("carol".into());
        assert!(g.allows(&bob, Perm::Read) && !g.allows(&bob, Perm::Write));
        assert!(g.allows(&carol, Perm::Read), "authenticated users read");
        assert!(g.allows(&carol, Perm::Write) && !g.allows(&carol, Perm::WriteAcp));
        assert!(!g.allows(&Caller::Anonymous, Perm::Read));
        // Kept and read back unchanged.
        assert_eq!(Explicit::decode(&g.encode()), Some(g.clone()));
        assert_eq!(Explicit::decode("public-read"), None);
        // Full control is every permission.
        let full = Explicit(vec![(Perm::FullControl, Who::AllUsers)]);
        assert!(full.allows(&Caller::Anonymous, Perm::WriteAcp));
        // Unknown accounts, groups and email addresses are refused.
        let one = |v: &str| {
            Explicit::from_headers(
                [
                    (Perm::Read, Some(v)),
                    (Perm::Write, None),
                    (Perm::ReadAcp, None),
                    (Perm::WriteAcp, None),
                    (Perm::FullControl, None),
                ],
                &known,
            )
        };
        assert_eq!(
            one("id=\"mallory\"").unwrap_err().code().as_str(),
            "InvalidArgument"
        );
        assert_eq!(
            one("uri=\"http://acs.amazonaws.com/groups/s3/LogDelivery\"")
                .unwrap_err()
                .code()
                .as_str(),
            "InvalidArgument"
        );
        assert_eq!(
            one("emailAddress=\"a@b\"").unwrap_err().code().as_str(),
            "NotImplemented"
        );
        assert_eq!(
            one("id=\"bob;READ=uri:AllUsers\"")
                .unwrap_err()
                .code()
                .as_str(),
            "InvalidArgument"
        );
    }
}
