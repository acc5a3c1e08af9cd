//! The cuFile calls against the fake: registration, reads and writes of a device buffer.

use super::*;
use crate::memory::{Buffer, FakeDeviceMemory, Memory};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

fn device_buf(len: usize) -> Box<dyn DeviceBuf> {
    let Buffer::Device(buf) = FakeDeviceMemory::default().alloc(len).unwrap() else {
        panic!("device memory is not host memory");
    };
    buf
}

fn direct_file(dir: &std::path::Path) -> std::fs::File {
    let path = dir.join("f");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&vec![7u8; 8192]).unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap()
}

#[test]
fn a_registered_buffer_is_read_and_written_through_a_registered_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = direct_file(dir.path());
    let cufile = CuFile::fake(FakeCuFile::Compat);
    let mut buf = device_buf(8192);
    let mut fh = cufile.register_file(file.as_raw_fd()).unwrap();
    let unregistered = fh.read(&mut *buf, 4096, 0).unwrap_err();
    assert!(unregistered
        .to_string()
        .contains("cuFileRead failed: CUfileOpError 5099"));
    cufile.register_buf(&*buf).unwrap();
    fh.read(&mut *buf, 4096, 4096).unwrap();
    let mut seen = [0u8; 8192];
    buf.copy_out(0, &mut seen).unwrap();
    assert!(seen[..4096].iter().all(|&b| b == 7));
    assert!(seen[4096..].iter().all(|&b| b == 0));
    buf.copy_in(0, &[9u8; 4096]).unwrap();
    fh.write(&*buf, 4096, 8192).unwrap();
    let eof = fh.read(&mut *buf, 8192, 8192).unwrap_err();
    assert_eq!(eof.kind(), io::ErrorKind::UnexpectedEof);
    drop(fh);
    cufile.deregister_buf(&*buf).unwrap();
    let written = std::fs::read(dir.path().join("f")).unwrap();
    assert_eq!(written.len(), 12288);
    assert!(written[8192..].iter().all(|&b| b == 9));
    assert!(cufile.deregister_buf(&*buf).is_err(), "deregistered twice");
}

#[test]
fn a_file_opened_without_o_direct_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("f")).unwrap();
    let refused = CuFile::fake(FakeCuFile::Compat).register_file(file.as_raw_fd());
    let e = refused.err().expect("cuFile wants O_DIRECT");
    assert_eq!(
        e.to_string(),
        "cuFileHandleRegister failed: CUfileOpError 5099, CUresult 0"
    );
}

#[test]
fn no_library_is_one_line_naming_it() {
    // This machine has no cuFile: the library itself is what is missing.
    let error = CuFile::load().unwrap_err();
    assert!(
        error.starts_with("libcufile.so.0 cannot be loaded ("),
        "{error}"
    );
    assert!(
        error.ends_with("): no cuFile (GPUDirect Storage) here"),
        "{error}"
    );
    assert!(!error.contains('\n'));
}
