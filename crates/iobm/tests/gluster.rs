//! GlusterFS on loopback, end to end (root only): glusterd started here with its own working,
//! run and log directories, a one-brick volume on a directory of this machine's disk mounted
//! through GlusterFS' FUSE client, and node_exporter counting that disk. A read served by the
//! brick's page cache is called so, with the brick device's bytes as evidence; the same read
//! after --server-drop-cmd dropped the brick's pages is uncached.

mod common;

use common::{iobm, load, node_evidence, node_exporter, u};
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// glusterd's port: the brick processes it starts look for it there, whatever its volfile says.
const GLUSTERD_PORT: u16 = 24007;
/// The brick's host: gluster refuses 127.0.0.1 and localhost in a brick, not the rest of
/// 127.0.0.0/8, which is loopback too.
const HOST: &str = "127.0.0.2";

/// glusterd, a volume of one brick and its FUSE mount, all under one directory. Dropped (also
/// after a failed assertion): unmounted, the volume stopped and deleted, its processes ended.
struct Gluster {
    dir: PathBuf,
    volume: String,
    glusterd: Child,
    created: bool,
    mounted: bool,
    /// The socket glusterd has the brick make in /var/run/gluster (it names no other place).
    brick_socket: Option<PathBuf>,
}

impl Gluster {
    fn start(dir: &Path) -> Gluster {
        for tool in ["glusterd", "gluster", "glusterfs"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .unwrap()
                .status
                .success();
            assert!(
                found,
                "{tool} is not installed (scripts/test installs glusterfs-server)"
            );
        }
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", GLUSTERD_PORT)).is_err(),
            "something already listens on glusterd's port {GLUSTERD_PORT} (another glusterd?)"
        );
        for sub in ["wd", "run", "log", "brick", "mnt"] {
            std::fs::create_dir(dir.join(sub)).unwrap();
        }
        let volfile = dir.join("glusterd.vol");
        std::fs::write(
            &volfile,
            format!(
                "volume management\n    type mgmt/glusterd\n    option working-directory {d}/wd\n    option run-directory {d}/run\n    option logging-directory {d}/log\n    option glusterd-sockfile {d}/run/glusterd.socket\n    option transport-type socket\n    option transport.address-family inet\nend-volume\n",
                d = dir.display()
            ),
        )
        .unwrap();
        let glusterd = Command::new("glusterd")
            .arg("--no-daemon")
            .arg("--volfile")
            .arg(&volfile)
            .arg("--pid-file")
            .arg(dir.join("run/glusterd.pid"))
            .arg("--log-file")
            .arg(dir.join("log/glusterd.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut g = Gluster {
            dir: dir.to_path_buf(),
            volume: format!("iobm{}", std::process::id()),
            glusterd,
            created: false,
            mounted: false,
            brick_socket: None,
        };
        common::wait_for(GLUSTERD_PORT, &mut g.glusterd);
        let brick = format!("{HOST}:{}", g.brick().display());
        g.cli(&["volume", "create", &g.volume, &brick, "force"]);
        g.created = true;
        g.cli(&["volume", "start", &g.volume]);
        g.brick_socket = g.pids().iter().find_map(|&pid| {
            let args = cmdline(pid);
            let at = args.iter().position(|a| a == "-S")?;
            args.get(at + 1).map(PathBuf::from)
        });
        let client = Command::new("glusterfs")
            .arg(format!("--volfile-server={HOST}"))
            .arg(format!("--volfile-id={}", g.volume))
            .arg(format!(
                "--log-file={}",
                dir.join("log/client.log").display()
            ))
            .arg(format!(
                "--pid-file={}",
                dir.join("run/client.pid").display()
            ))
            .arg(g.mount_point())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        g.mounted = true;
        assert!(
            client.success(),
            "glusterfs: {client}: {}",
            g.log("client.log")
        );
        // The client daemon mounts after its parent returns.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mnt = g.mount_point().display().to_string();
        while !std::fs::read_to_string("/proc/mounts")
            .unwrap()
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(&mnt) && l.contains(" fuse.glusterfs "))
        {
            assert!(
                Instant::now() < deadline,
                "the volume was not mounted on {mnt}: {}",
                g.log("client.log")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        g
    }

    fn brick(&self) -> PathBuf {
        self.dir.join("brick")
    }

    fn mount_point(&self) -> PathBuf {
        self.dir.join("mnt")
    }

    /// The gluster CLI against this glusterd (its socket), without questions.
    fn gluster(&self, args: &[&str]) -> Output {
        Command::new("gluster")
            .arg("--mode=script")
            .arg(format!(
                "--glusterd-sock={}",
                self.dir.join("run/glusterd.socket").display()
            ))
            .arg(format!(
                "--log-file={}",
                self.dir.join("log/cli.log").display()
            ))
            .args(args)
            .output()
            .unwrap()
    }

    /// A gluster command that must succeed.
    fn cli(&self, args: &[&str]) {
        let out = self.gluster(args);
        assert!(
            out.status.success(),
            "gluster {args:?}: {}\nglusterd.log: {}",
            said(&out),
            self.log("glusterd.log")
        );
    }

    /// The last lines of one of its logs.
    fn log(&self, name: &str) -> String {
        let text = std::fs::read_to_string(self.dir.join("log").join(name)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// The processes glusterd and the client left pid files for: the brick's and the client's.
    fn pids(&self) -> Vec<i32> {
        let mut files = vec![self.dir.join("run/client.pid")];
        if let Ok(dir) = std::fs::read_dir(self.dir.join("run/vols").join(&self.volume)) {
            files.extend(dir.flatten().map(|e| e.path()));
        }
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "pid"))
            .filter_map(|f| std::fs::read_to_string(f).ok()?.trim().parse().ok())
            .collect()
    }
}

impl Drop for Gluster {
    fn drop(&mut self) {
        if self.mounted {
            let unmounted = Command::new("umount")
                .arg(self.mount_point())
                .status()
                .is_ok_and(|s| s.success());
            if !unmounted {
                let _ = Command::new("umount")
                    .arg("-l")
                    .arg(self.mount_point())
                    .status();
            }
        }
        if self.created {
            let _ = self.gluster(&["volume", "stop", &self.volume, "force"]);
            let _ = self.gluster(&["volume", "delete", &self.volume]);
        }
        // What the stop left running, if it failed: only processes of this directory.
        let dir = self.dir.display().to_string();
        for pid in self.pids() {
            if cmdline(pid).iter().any(|a| a.contains(&dir)) {
                // SAFETY: kill sends a signal to a process this test started.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
        // SAFETY: as above; glusterd is this test's child.
        unsafe { libc::kill(self.glusterd.id() as i32, libc::SIGTERM) };
        let _ = self.glusterd.wait();
        if let Some(socket) = &self.brick_socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// A process's arguments; empty once it is gone.
fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The disk under `path` as node_exporter names it (vda, sda, nvme0n1): a partition's disk.
fn disk_of(path: &Path) -> String {
    let dev = std::fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}"))
        .unwrap_or_else(|e| {
            panic!(
                "{} is on no block device ({major}:{minor}: {e}): node_exporter cannot count the brick's reads",
                path.display()
            )
        });
    let disk = if sys.join("partition").exists() {
        sys.parent().unwrap()
    } else {
        &sys
    };
    disk.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs iobm with `args`, and its result document.
fn run_json(args: &[&str], dir: &Path) -> (Output, Value) {
    let json = dir.join("r.json");
    let out = iobm()
        .args(args)
        .args(["--json", json.to_str().unwrap()])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(out.status.success(), "iobm {args:?}: {}", said(&out));
    (out, load(&json))
}

const DATA: u64 = 256 << 20;

/// Written through the FUSE client and read back after the client's own pages of the data set
/// were dropped (iobm's default before a read): the brick's page cache still holds what the
/// brick process wrote, and node_exporter shows its disk reading next to nothing. Then the same
/// data set, kept, is read after --server-drop-cmd dropped the brick files' pages (GNU dd's
/// nocache, so no other process's pages are read back meanwhile): the disk read all of it.
#[test]
#[ignore = "needs root: mounts GlusterFS"]
fn a_read_from_the_bricks_cache_and_one_from_its_disk_are_told_apart() {
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let gluster = Gluster::start(scratch.path());
    let node = node_exporter();
    let disk = disk_of(&gluster.brick());
    let out = tempfile::tempdir().unwrap();
    let servers = ["--server-metrics", &node.url, "--server-devices", &disk];
    let mnt = gluster.mount_point().display().to_string();
    let (run, warm) = run_json(
        &[
            &["stream", "--size", "256MiB", "--keep", &mnt][..],
            &servers,
        ]
        .concat(),
        out.path(),
    );
    common::assert_matches_schema(&warm);
    let read = &warm["phases"][1];
    assert_eq!(read["op"], "read");
    assert_eq!(read["settings"]["cache_dropped"], "files");
    assert_eq!(
        u(&read["cache"]["resident_before_bytes"]),
        0,
        "{}",
        read["cache"]
    );
    let e = node_evidence(read, &node.url);
    assert_eq!(e["device"], disk.as_str(), "{e}");
    assert!(u(&e["device_read_bytes"]) < DATA / 10, "{e}");
    common::assert_served_by_server_caches(read, &disk, "256.00 MiB");
    // The bytes came over loopback from the brick process: the FUSE client kept no copy.
    let lo = common::loopback(read);
    assert!(u(&lo["received_bytes"]) >= DATA, "{lo}");
    // Nothing below a FUSE mount for the client to follow.
    let below = read["cache"]["below"].to_string();
    assert!(
        below.contains("the file system is FUSE: no block device"),
        "{below}"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains(&format!(
            "  server {} (node_exporter): devices {disk} read ",
            node.url
        )),
        "{stdout}"
    );

    let kept = warm["config"]["run_dir"].as_str().unwrap();
    let drop = format!(
        "sync; find {} -type f -exec dd if={{}} iflag=nocache count=0 status=none ';'",
        gluster.brick().display()
    );
    let (_, cold) = run_json(
        &[&["read", kept, "--server-drop-cmd", &drop][..], &servers].concat(),
        out.path(),
    );
    let read = &cold["phases"][0];
    assert_eq!(read["settings"]["cache_dropped"], "files+servers");
    let e = node_evidence(read, &node.url);
    assert!(u(&e["device_read_bytes"]) >= DATA * 9 / 10, "{e}");
    assert_eq!(
        read["cache"]["verdict"]["verdict"], "uncached",
        "{}",
        read["cache"]
    );
    assert!(
        read["cache"]["verdict"]["evidence"]
            .as_str()
            .unwrap()
            .ends_with("their caches were dropped before the phase (--server-drop-cmd)"),
        "{}",
        read["cache"]["verdict"]
    );
}
