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
