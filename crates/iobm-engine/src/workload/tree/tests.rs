//! Unit tests of the metadata namespace: tree shapes, item names, strides, refused shapes.

use super::*;
use std::collections::HashSet;

fn tree(depth: u32, branch: u32, items: u64, unique: bool, ranks: usize, jobs: usize) -> Tree {
    Tree {
        base: "t".into(),
        depth,
        branch,
        items,
        per: ItemsPer::Worker,
        unique,
        leaves_only: false,
        ranks,
        jobs,
    }
}

fn dir(t: &Tree, owner: usize, k: u64) -> String {
    let mut s = String::new();
    t.write_dir(&mut s, owner, k);
    s
}

fn item(t: &Tree, kind: ItemName, owner: usize, i: u64) -> String {
    let mut s = String::new();
    t.write_item(&mut s, kind, owner, i);
    s
}

#[test]
fn a_tree_has_the_directories_of_its_depth_and_branch_breadth_first() {
    let t = tree(2, 3, 10, false, 1, 1);
    assert_eq!(t.dirs(), 1 + 3 + 9);
    let dirs: Vec<String> = (0..t.dirs()).map(|k| dir(&t, 0, k)).collect();
    assert_eq!(&dirs[..5], ["t", "t/b0", "t/b1", "t/b2", "t/b0/b0"]);
    assert_eq!(dirs[12], "t/b2/b2");
    // Every directory's parent comes before it.
    for (k, d) in dirs.iter().enumerate().skip(1) {
        let parent = &d[..d.rfind('/').unwrap()];
        let at = dirs.iter().position(|p| p == parent).unwrap();
        assert!(at < k, "{d} before its parent");
    }
    assert_eq!(dirs.iter().collect::<HashSet<_>>().len(), dirs.len());
    assert_eq!(tree(0, 0, 5, false, 1, 1).dirs(), 1);
    assert_eq!(tree(3, 1, 5, false, 1, 1).dirs(), 4);
    // A tree per worker: each under its own root.
    let u = tree(1, 2, 4, true, 2, 2);
    assert_eq!(dir(&u, 3, 0), "t.3");
    assert_eq!(dir(&u, 3, 2), "t.3/b1");
    assert_eq!(u.roots(), ["t.0", "t.1", "t.2", "t.3"]);
    assert_eq!(t.roots(), ["t"]);
}

#[test]
fn items_are_spread_over_the_item_directories_a_run_in_each() {
    // 7 items over 3 directories: 3, 3 and 1, consecutive items together (mdtest's order).
    let t = tree(1, 2, 7, false, 1, 1);
    let names: Vec<String> = (0..7).map(|i| item(&t, ItemName::File, 0, i)).collect();
    assert_eq!(names[0], "t/f.0.0");
    assert_eq!(names[2], "t/f.0.2");
    assert_eq!(names[3], "t/b0/f.0.3");
    assert_eq!(names[5], "t/b0/f.0.5");
    assert_eq!(names[6], "t/b1/f.0.6");
    let leaves = Tree {
        leaves_only: true,
        per: ItemsPer::Directory,
        ..tree(2, 2, 3, false, 1, 1)
    };
    assert_eq!(leaves.item_dirs(), 4);
    assert_eq!(leaves.items_per_worker(), 12);
    for i in 0..12 {
        let name = item(&leaves, ItemName::Dir, 0, i);
        assert_eq!(name.matches('/').count(), 3, "{name} is not in a leaf");
    }
    let per_dir: HashSet<u64> = (0..12).map(|i| leaves.dir_of_item(i)).collect();
    assert_eq!(per_dir, HashSet::from([3, 4, 5, 6]));
}

#[test]
fn no_two_workers_items_share_a_name_in_a_shared_tree_or_their_own() {
    for unique in [false, true] {
        let t = Tree {
            per: ItemsPer::Directory,
            ..tree(2, 2, 3, unique, 3, 4)
        };
        let mut seen = HashSet::new();
        let tree_dirs: HashSet<String> = (0..t.workers())
            .flat_map(|g| (0..t.dirs()).map(move |k| (g, k)))
            .map(|(g, k)| dir(&t, g, k))
            .collect();
        for g in 0..t.workers() {
            for i in 0..t.items_per_worker() {
                for kind in [ItemName::File, ItemName::Renamed, ItemName::Dir] {
                    let name = item(&t, kind, g, i);
                    assert!(!tree_dirs.contains(&name), "{name} is a tree directory");
                    assert!(seen.insert(name.clone()), "{name} twice (unique: {unique})");
                }
            }
        }
        // 12 workers, 3 items in each of 7 directories, 3 kinds of name.
        assert_eq!(seen.len(), 12 * 3 * 7 * 3);
    }
}

#[test]
fn a_stride_has_each_worker_work_on_the_items_of_the_worker_that_many_ranks_on() {
    // 4 ranks of 2 workers: worker 1 of rank 0 (global 1) works on rank 1's worker 1 (3).
    let t = tree(0, 0, 5, false, 4, 2);
    assert_eq!(t.owner(1, 1), 3);
    assert_eq!(t.owner(7, 1), 1);
    assert_eq!(t.owner(6, 2), 2);
    assert_eq!(t.owner(5, 0), 5);
    for stride in 1..4 {
        let owners: Vec<usize> = (0..8).map(|g| t.owner(g, stride)).collect();
        // A permutation: every worker's items are worked on once, never by their own rank.
        assert_eq!(owners.iter().collect::<HashSet<_>>().len(), 8);
        for (g, &o) in owners.iter().enumerate() {
            assert_ne!(
                g / 2,
                o / 2,
                "stride {stride}: worker {g} on its own rank's items"
            );
            assert_eq!(g % 2, o % 2);
        }
    }
    assert!(t.check_stride(1).is_ok() && t.check_stride(0).is_ok());
    let refused = t.check_stride(4).unwrap_err();
    assert!(
        refused.contains("own items") && !refused.contains('\n'),
        "{refused}"
    );
    assert!(t.check_stride(8).is_err());
}

#[test]
fn a_phase_works_on_the_owners_items_up_to_its_limit() {
    let t = tree(1, 2, 6, false, 2, 2);
    let mut work = TreeWork {
        stride: 1,
        ..TreeWork::new(t, 1)
    };
    assert_eq!(work.global(1), 3);
    // Creations are of one's own items; stats of the worker a rank on.
    assert_eq!(work.owner(MetaOp::FileCreate, 1), 3);
    assert_eq!(work.owner(MetaOp::FileStat, 1), 1);
    assert_eq!(work.owner(MetaOp::DirRemove, 0), 0);
    assert_eq!(work.owner(MetaOp::TreeCreate, 0), 2);
    assert_eq!(work.count(MetaOp::FileStat, 0), 6);
    work.limit = Some(4);
    assert_eq!(work.count(MetaOp::FileStat, 0), 4);
    work.limit = Some(40);
    assert_eq!(work.count(MetaOp::FileStat, 0), 6);
    // The shared tree is made by global worker 0 alone; a tree per worker by each.
    assert_eq!(work.count(MetaOp::TreeCreate, 0), 0);
    let rank0 = TreeWork::new(work.tree.clone(), 0);
    assert_eq!(rank0.count(MetaOp::TreeCreate, 0), 3);
    assert_eq!(rank0.count(MetaOp::TreeRemove, 1), 0);
    let (mut name, mut to) = (String::new(), String::new());
    rank0.write_name(MetaOp::TreeRemove, 0, 0, &mut name, &mut to);
    assert_eq!(name, "t/b1", "children are removed first");
    // Item 2 of 6 over 3 directories: the second directory's first.
    rank0.write_name(MetaOp::FileRename, 1, 2, &mut name, &mut to);
    assert_eq!((name.as_str(), to.as_str()), ("t/b0/f.1.2", "t/b0/r.1.2"));
    let back = TreeWork {
        renamed: true,
        ..rank0.clone()
    };
    back.write_name(MetaOp::FileRename, 1, 2, &mut name, &mut to);
    assert_eq!((name.as_str(), to.as_str()), ("t/b0/r.1.2", "t/b0/f.1.2"));
    back.write_name(MetaOp::FileRemove, 1, 2, &mut name, &mut to);
    assert_eq!(name, "t/b0/r.1.2");
}

#[test]
fn bad_shapes_are_refused_in_one_line() {
    let bad = [
        tree(0, 0, 0, false, 1, 1),
        tree(2, 0, 5, false, 1, 1),
        tree(65, 1, 5, false, 1, 1),
        tree(31, 2, 5, false, 1, 1),
        tree(1, 2, 5, false, 0, 1),
        Tree {
            base: "a/b".into(),
            ..tree(1, 2, 5, false, 1, 1)
        },
    ];
    for t in bad {
        let e = t.check().unwrap_err();
        assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    }
    assert!(tree(0, 0, 1, false, 1, 1).check().is_ok());
    assert!(tree(3, 10, 0, true, 2, 8).check().is_ok());
}

#[test]
fn every_operation_has_its_own_name() {
    let names: HashSet<OpName> = MetaOp::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(names.len(), MetaOp::ALL.len());
    for op in MetaOp::ALL {
        assert_eq!(op.classes(), [op.name()]);
    }
}
