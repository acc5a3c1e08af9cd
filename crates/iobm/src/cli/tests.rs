use super::units::parse_size_range;
use super::*;
use iobm_engine::DataKind;

#[test]
fn data_kinds() {
    assert_eq!(parse_data("random"), Ok(DataKind::Random));
    assert_eq!(
        parse_data("compressible:40"),
        Ok(DataKind::Compressible(40))
    );
    assert!(parse_data("compressible:140").is_err());
    assert!(parse_data("ones").is_err());
    for k in [
        DataKind::Random,
        DataKind::Zero,
        DataKind::Compressible(5),
        DataKind::Dedupe(30),
    ] {
        assert_eq!(parse_data(&k.name()), Ok(k));
    }
}

#[test]
fn bonnie_file_specs() {
    assert_eq!(
        parse_files("16"),
        Ok(FilesArg {
            count: 16384,
            max_size: 0,
            min_size: 0,
            dirs: 0
        })
    );
    assert_eq!(
        parse_files("1:4k:100:8"),
        Ok(FilesArg {
            count: 1024,
            max_size: 4096,
            min_size: 100,
            dirs: 8
        })
    );
    assert!(parse_files("1:10:20").is_err());
    assert!(parse_files("x").is_err());
    assert!(parse_files("1:2:3:4:5").is_err());
}

#[test]
fn size_ranges() {
    assert_eq!(parse_size_range("4KiB..1MiB"), Ok((4096, 1 << 20)));
    assert!(parse_size_range("2M..1M").unwrap_err().contains("larger"));
    assert!(parse_size_range("1M").unwrap_err().contains("MIN..MAX"));
}

#[test]
fn the_command_line_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn vocabularies_of_other_crates_parse_by_their_own_names() {
    use clap::Parser;
    use iobm_engine::{Engine, FsyncPolicy, PerChar};
    let parse = |args: &[&str]| Cli::try_parse_from(["iobm"].iter().chain(args));
    let Command::Bonnie(bonnie) =
        parse(&["bonnie", "--fsync", "each", "--per-char", "syscall", "/d"])
            .unwrap()
            .command
    else {
        panic!("bonnie")
    };
    assert_eq!(
        (bonnie.fsync, bonnie.per_char),
        (FsyncPolicy::Each, PerChar::Syscall)
    );
    let Command::Write(write) = parse(&["write", "--engine", "io_uring", "/d"])
        .unwrap()
        .command
    else {
        panic!("write")
    };
    assert_eq!(
        (write.fsync, write.io.engine),
        (FsyncPolicy::End, Some(Engine::IoUring))
    );
    let Command::S3(s3) = parse(&["s3", "put", "--payload-signing", "sha256"])
        .unwrap()
        .command
    else {
        panic!("s3")
    };
    assert_eq!(s3.payload_signing, iobm_s3::PayloadSigning::Sha256);
    assert_eq!(s3.op, iobm_engine::ObjectOp::Put);
    assert!(parse(&["write", "--fsync", "always", "/d"]).is_err());
}

#[test]
fn rates_of_operations_or_bytes_per_second() {
    use super::units::parse_op_rate;
    assert_eq!(parse_op_rate("200/s"), Ok(Rate::Ops(200.0)));
    assert_eq!(parse_op_rate("12.5/s"), Ok(Rate::Ops(12.5)));
    assert_eq!(parse_op_rate("200MiB/s"), Ok(Rate::Bytes(200 << 20)));
    assert_eq!(Rate::Bytes(200 << 20).ops_per_s(1 << 20), 200.0);
    for bad in ["0/s", "0MiB/s", "5MB", "-3/s", "fast", "inf/s"] {
        assert!(parse_op_rate(bad).is_err(), "{bad}");
    }
}

#[test]
fn rate_sweeps_from_one_rate_to_a_higher_one_in_steps() {
    use super::units::parse_rate_sweep;
    let sweep = parse_rate_sweep("100..400/4").unwrap();
    assert_eq!(sweep.rates(4096), [100.0, 200.0, 300.0, 400.0]);
    let bytes = parse_rate_sweep("4KiB..8KiB/2").unwrap();
    assert_eq!(bytes.rates(4096), [1.0, 2.0]);
    assert_eq!(
        parse_rate_sweep("400..100/4").unwrap_err(),
        "TO is below FROM"
    );
    for bad in [
        "100..400",
        "100..400/1",
        "100..400/101",
        "0..4/2",
        "1..4MiB/2",
        "1-4/2",
    ] {
        assert!(parse_rate_sweep(bad).is_err(), "{bad}");
    }
}
