//! What a rank sends rank 0 after a phase, as bytes: `[header length, u64 LE][JSON header]
//! [rows]`, the header its phase (its workers' own series folded away) with its folded series,
//! the rows its workers' per-worker series as compressed side-file rows, which rank 0 appends
//! as they are.

use super::RankPhase;
use iobm_results::detail::FoldedSeries;

/// What a rank sends of `part`: its workers' series folded (and with `detach`, their own series
/// moved into compressed rows), framed.
pub fn send(mut part: RankPhase, detach: bool) -> Vec<u8> {
    let name = part.phase.name.clone();
    let folded = FoldedSeries::of(&name, &mut part.phase.workers, detach);
    let part = RankPhase {
        traces: Vec::new(),
        ..part
    };
    encode(&part, &folded)
}

/// The bytes of `part` with its series `folded`.
pub fn encode(part: &RankPhase, folded: &FoldedSeries) -> Vec<u8> {
    let header = serde_json::to_vec(&(part, folded)).expect("serialisable");
    let mut out = Vec::with_capacity(8 + header.len() + folded.rows.len());
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&folded.rows);
    out
}

/// [`encode`] undone.
pub fn decode(bytes: &[u8]) -> Result<(RankPhase, FoldedSeries), String> {
    let length = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or("a rank's part shorter than its length")?;
    let end = usize::try_from(length)
        .ok()
        .and_then(|l| l.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or("a rank's part shorter than its header")?;
    let (part, mut folded): (RankPhase, FoldedSeries) =
        serde_json::from_slice(&bytes[8..end]).map_err(|e| format!("a rank's part header: {e}"))?;
    folded.rows = bytes[end..].to_vec();
    Ok((part, folded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_part_is_refused() {
        assert!(decode(&[1, 2]).is_err());
        let mut bytes = 100u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        assert!(matches!(decode(&bytes), Err(e) if e.contains("header")));
    }
}
