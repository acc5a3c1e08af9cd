//! Unit tests of a versioned phase's worker over an in-memory store that keeps versions.

use crate::runner::{run_phase, Ranked};
use crate::workload::{Mix, ObjectOp, ObjectSpec, Phase, StopRule};
use crate::{Control, PhaseEnd};
use iobm_stats::names::{OpName, Picks};
use iobm_stats::sizes::SizeDist;
use iobm_target::{Body, Capabilities, Capability, ListPage, Objects, Target};
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;

/// Every version of every key, oldest first: (version id, bytes).
type Store = BTreeMap<String, Vec<(String, Vec<u8>)>>;

/// A store that keeps versions; `mislead` makes it serve (`Latest`) the newest version
/// whatever was asked, or (`NoIds`) name no version of what it stores.
#[derive(Default)]
struct Versions {
    store: Mutex<Store>,
    made: Mutex<u64>,
    mislead: Option<Mislead>,
}

#[derive(Clone, Copy)]
enum Mislead {
    Latest,
    NoIds,
}

struct Session<'a> {
    of: &'a Versions,
    last: Option<String>,
}

fn not_found(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, what.to_string())
}

impl Session<'_> {
    /// The bytes of `version` of `name`, or its newest where the store misleads.
    fn bytes(&self, name: &str, version: &str) -> io::Result<Vec<u8>> {
        let store = self.of.store.lock().unwrap();
        let versions = store.get(name).ok_or_else(|| not_found(name))?;
        let found = match self.of.mislead {
            Some(Mislead::Latest) => versions.last(),
            _ => versions.iter().find(|(v, _)| v == version),
        };
        found
            .map(|(_, b)| b.clone())
            .ok_or_else(|| not_found(version))
    }
}

impl Objects for Session<'_> {
    fn put(&mut self, name: &str, body: &Body<'_>) -> io::Result<()> {
        let mut bytes = Vec::new();
        body.for_each_batch(0, body.len(), &mut |slices| {
            slices.iter().for_each(|s| bytes.extend_from_slice(s));
            Ok(())
        })?;
        let mut made = self.of.made.lock().unwrap();
        *made += 1;
        let id = format!("v{made}");
        let mut store = self.of.store.lock().unwrap();
        store
            .entry(name.to_string())
            .or_default()
            .push((id.clone(), bytes));
        self.last = match self.of.mislead {
            Some(Mislead::NoIds) => None,
            _ => Some(id),
        };
        Ok(())
    }
    fn last_version(&self) -> Option<&str> {
        self.last.as_deref()
    }
    fn get(&mut self, _: &str, _: Option<(u64, u64)>, _: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        unreachable!("a versioned phase reads versions")
    }
    fn get_version(&mut self, name: &str, v: &str, sink: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let bytes = self.bytes(name, v)?;
        sink(&[]);
        sink(&bytes);
        Ok(bytes.len() as u64)
    }
    fn head(&mut self, _: &str) -> io::Result<u64> {
        unreachable!("a versioned phase asks for versions")
    }
    fn head_version(&mut self, name: &str, version: &str) -> io::Result<u64> {
        self.bytes(name, version).map(|b| b.len() as u64)
    }
    fn delete(&mut self, _: &str) -> io::Result<()> {
        unreachable!("a versioned phase deletes versions")
    }
    fn delete_version(&mut self, name: &str, version: &str) -> io::Result<()> {
        let mut store = self.of.store.lock().unwrap();
        let versions = store.get_mut(name).ok_or_else(|| not_found(name))?;
        let at = versions.iter().position(|(v, _)| v == version);
        versions.remove(at.ok_or_else(|| not_found(version))?);
        Ok(())
    }
    fn list(&mut self, _: Option<&str>, _: u32) -> io::Result<ListPage> {
        unreachable!("a versioned phase lists versions")
    }
    /// A page of `max` versions from the position `after` names.
    fn list_versions(&mut self, after: Option<&str>, max: u32) -> io::Result<ListPage> {
        let all: usize = self.of.store.lock().unwrap().values().map(Vec::len).sum();
        let from: usize = after.map_or(0, |a| a.parse().expect("a position"));
        let to = (from + max as usize).min(all);
        Ok(ListPage {
            keys: (to - from) as u64,
            next: (to < all).then(|| to.to_string()),
        })
    }
}

impl Target for Versions {
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[Capability::Versions])
    }
    fn open(
        &self,
        _: &str,
        _: iobm_target::OpenOptions,
    ) -> io::Result<Box<dyn iobm_target::Handle>> {
        Err(iobm_target::Unsupported(Capability::Files).into())
    }
    fn len(&self, _: &str) -> io::Result<u64> {
        Err(iobm_target::Unsupported(Capability::Files).into())
    }
    fn objects(&self, _: usize) -> io::Result<Box<dyn Objects + '_>> {
        Ok(Box::new(Session {
            of: self,
            last: None,
        }))
    }
    fn remove(&self, _: &str) -> io::Result<()> {
        Ok(())
    }
}

fn versioned(objects: u64, ops: u64) -> Phase {
    let spec = ObjectSpec {
        count: objects,
        size: SizeDist::Uniform {
            min: 5_000,
            max: 20_000,
        },
        range: None,
        part_size: 16_384,
        part_concurrency: 1,
        mix: Mix {
            list: 5,
            ..Mix::default()
        },
        page_keys: 7,
        delete_batch: 1,
        retries: 0,
        max_new: None,
        picks: Picks::Random,
        access: iobm_stats::access::AccessDist::Uniform,
    };
    let mut phase = Phase::objects(ObjectOp::Versioned, 2, spec, StopRule::Ops(ops));
    phase.verify = Some(9);
    phase
}

#[test]
fn a_versioned_phase_stores_versions_and_reads_lists_and_deletes_them_each_checked() {
    let store = Versions::default();
    let outcome = run_phase(
        &store,
        &versioned(6, 400),
        &Control::new(3, 2),
        &Ranked::ALONE,
    );
    assert_eq!(outcome.end, PhaseEnd::Completed, "{:?}", outcome.errors);
    let ops = |name: OpName| {
        let class = outcome
            .by_op
            .iter()
            .find(|o| o.name == name)
            .expect("a class");
        class.ops
    };
    let (puts, gets, deletes) = (ops(OpName::Put), ops(OpName::Get), ops(OpName::Delete));
    assert!(gets > 0 && ops(OpName::Head) > 0 && ops(OpName::List) > 0 && deletes > 0);
    assert_eq!(outcome.by_op.iter().map(|o| o.ops).sum::<u64>(), 400);
    // Only LISTs return keys.
    for class in &outcome.by_op {
        assert_eq!(
            class.keys > 0,
            class.name == OpName::List,
            "{:?}",
            class.name
        );
    }
    // What the store keeps is every version stored less those deleted, on the six keys.
    let store = store.store.into_inner().unwrap();
    let kept: u64 = store.values().map(|v| v.len() as u64).sum();
    assert_eq!(kept, puts - deletes);
    let names: Vec<&str> = store.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["obj.0", "obj.1", "obj.2", "obj.3", "obj.4", "obj.5"]
    );
    // Old versions are kept beside new ones, each with its own bytes.
    let most = store.values().map(Vec::len).max().unwrap();
    assert!(most >= 2, "{most}");
    let first = store.values().find(|v| v.len() >= 2).unwrap();
    assert_ne!(first[0].1, first[1].1);
}

/// The first error of a versioned phase of `ops` operations on a store that misleads so.
fn first_error(mislead: Mislead, ops: u64) -> String {
    let store = Versions {
        mislead: Some(mislead),
        ..Versions::default()
    };
    let phase = versioned(2, ops);
    let outcome = run_phase(&store, &phase, &Control::new(3, 2), &Ranked::ALONE);
    assert_eq!(outcome.end, PhaseEnd::Failed);
    outcome.errors[0].first.clone()
}

#[test]
fn a_get_answered_with_another_version_fails_its_check() {
    let first = first_error(Mislead::Latest, 400);
    assert!(first.contains("not what was stored"), "{first}");
}

#[test]
fn a_store_that_names_no_versions_fails_the_first_put_with_why() {
    let first = first_error(Mislead::NoIds, 40);
    assert!(first.contains("does not keep versions"), "{first}");
}
