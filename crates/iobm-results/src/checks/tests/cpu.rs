//! The CPU-bound warning: which processes' CPU it counts (iobm's, a gateway's on this host).

use super::*;

#[test]
fn a_gateway_on_this_host_that_takes_the_cpus_is_said_to_bound_the_rate() {
    // 1 s on 2 CPUs: iobm 0.5 CPU-s, the gateway's counters 1.2 more (85%).
    let mut p = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    p.cpu.user_s = 0.5;
    let machine = Machine {
        cpus: 2,
        ..Machine::with_ram(RAM)
    };
    let server = |same_host| crate::ServerEvidence {
        endpoint: "http://127.0.0.1:9000".into(),
        served_bytes: 200 * MIB,
        resident_bytes: 0,
        received_bytes: 0,
        device_read_bytes: None,
        device_written_bytes: None,
        device: None,
        cpu_s: 1.2,
        same_host,
        ..crate::ServerEvidence::default()
    };
    let bound = "bounded by this machine's CPU, not by the storage: iobm and the gateway on this machine (its counters) used 1.7 of the 2.0 CPU-s its 2 CPUs had in the phase (85%)";
    p.cache.servers = vec![server(true)];
    assert!(
        says(&p, &machine, bound),
        "{:?}",
        phase_warnings(&p, &machine)
    );
    // Another machine's CPUs are not this one's.
    p.cache.servers = vec![server(false)];
    assert!(!says(&p, &machine, "bounded by this machine's CPU"));
    // Under the bound: nothing.
    p.cache.servers = vec![crate::ServerEvidence {
        cpu_s: 0.5,
        ..server(true)
    }];
    assert!(!says(&p, &machine, "bounded by this machine's CPU"));
    // The built-in gateway's own CPU, told apart in the phase.
    p.cache.servers = vec![server(true)];
    p.cpu.gateway_s = Some(1.2);
    assert!(says(
        &p,
        &machine,
        "bounded by this machine's CPU, not by the storage: iobm and its built-in gateway used 1.7"
    ));
}

#[test]
fn the_cpu_bound_counts_iobm_and_the_gateways_of_this_machine_only() {
    let machine = Machine {
        cpus: 2,
        ..Machine::with_ram(RAM)
    };
    // 1 s on 2 CPUs, iobm alone at 100%: no gateway, no bound told.
    let mut p = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    (p.cpu.user_s, p.cpu.system_s) = (1.0, 1.0);
    assert!(!says(&p, &machine, "bounded by this machine's CPU"));
    // User, system and the gateway's add up: 0.5 + 0.5 + 0.6 = 1.6 of 2.0 (80%).
    (p.cpu.user_s, p.cpu.system_s) = (0.5, 0.5);
    let gateway = |cpu_s| crate::ServerEvidence {
        endpoint: "http://127.0.0.1:9000".into(),
        cpu_s,
        same_host: true,
        ..crate::ServerEvidence::default()
    };
    p.cache.servers = vec![gateway(0.6)];
    assert!(says(
        &p,
        &machine,
        "bounded by this machine's CPU, not by the storage: iobm and the gateway on this machine (its counters) used 1.6"
    ));
    p.cache.servers = vec![gateway(0.3), gateway(0.3)];
    assert!(says(
        &p,
        &machine,
        "bounded by this machine's CPU, not by the storage: iobm and the gateways on this machine (their counters) used 1.6"
    ));
    // A phase of no time has no CPU-s to share.
    p.end_ns = p.start_ns;
    assert!(!says(&p, &machine, "bounded by this machine's CPU"));
}
