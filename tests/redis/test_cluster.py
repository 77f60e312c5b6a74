# SPDX-License-Identifier: Apache-2.0
# Redis Cluster, the distributed engine (issue #64): 3 primaries and 3 replicas, each with the
# module loaded, take a dedup workload (per-device per-hour Bloom filters and a cuckoo filter per
# device, hash-tagged so that the keys spread over the slots and so over the 3 primaries). A
# batch counts as acknowledged only if WAIT 1 says a replica has it. Then one primary is killed
# with SIGKILL; once its replica is promoted and the cluster is ok again, every acknowledged item
# must still answer 1 (no false negative), BF.CARD / CF.INFO must count at least the acknowledged
# items, and the promoted replica must take writes for the slots it took over.
#
# Expectations, and the pages they come from:
#   cluster-enabled, cluster-config-file, cluster-node-timeout; a primary's port + 10000 is its
#     cluster bus port, so the port must be at most 55535 (redis.conf; the Redis Cluster
#     specification, https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/).
#   redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes; CLUSTER INFO
#     cluster_state:ok; CLUSTER SLOTS (slot ranges with their primary first); CLUSTER KEYSLOT and
#     hash tags {...}; a key sent to a node that does not serve its slot answers
#     "MOVED <slot> <ip>:<port>" (cluster tutorial and specification, .../commands/cluster-slots/).
#   A primary that is unreachable for cluster-node-timeout is marked FAIL and its replica is
#     promoted and takes its slots (specification, "Replica election and promotion").
#   WAIT numreplicas timeout: the number of replicas that acknowledged the connection's earlier
#     writes (https://redis.io/docs/latest/commands/wait/).
#   INFO replication role / master_link_status (https://redis.io/docs/latest/commands/info/).
#   BF.MADD replies 1 for an item newly added and 0 for one that may already be there; BF.CARD
#     counts the items added; CF.INSERT adds every item, repeats included, and CF.INFO's
#     "Number of items inserted" counts them; CF.COUNT never undercounts
#     (https://redis.io/docs/latest/commands/bf.madd/, .../bf.card/, .../cf.insert/,
#     .../cf.info/, .../cf.count/).
# Requests are routed by hand: the slot of each key (redis.crc.key_slot, checked against
# CLUSTER KEYSLOT) and a slot map read from CLUSTER SLOTS, sent to the owning primary.
import socket
import subprocess
import time

import pytest
import redis
from redis.crc import key_slot

from conftest import RedisServer, free_port, stop_all
from sfhelpers import fp_limit, info, items, wait_for

NODES = 6
DEVICES = [f"dev{i}" for i in range(60)]
BUCKETS = ("2026-12-02T10", "2026-12-02T11")
BATCH = 200          # items per BF.MADD / CF.INSERT
REPEATS = 20         # items of a key's first batch sent again in its second batch
BF_ERROR, BF_CAPACITY = "0.01", "10000"
CF_CAPACITY = "2000"
NODE_TIMEOUT_MS = 2000
FAILOVER_TIMEOUT = 30.0
SLOTS = 16384


def bloom_key(device, bucket):
    return f"dedup:{{{device}}}:{bucket}"


def cuckoo_key(device):
    return f"seen:{{{device}}}"


def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(n):
    """n loopback ports that are free with their cluster bus ports (port + 10000) free too."""
    chosen = set()
    for _ in range(1000):
        port = free_port()
        bus = port + 10000
        taken = chosen | {p + 10000 for p in chosen}
        if port <= 55535 and port not in taken and bus not in taken and _bindable(bus):
            chosen.add(port)
            if len(chosen) == n:
                return sorted(chosen)
    raise RuntimeError("could not find free ports for the cluster")


@pytest.fixture
def cluster_servers(tmp_path):
    """NODES RedisServers (conftest's class) in cluster mode, always stopped at the end."""
    servers = []
    try:
        for i, port in enumerate(cluster_ports(NODES)):
            name = f"node{i}"
            directory = tmp_path / name
            server = RedisServer(directory, (
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(directory / "nodes.conf"),
                "--cluster-node-timeout", NODE_TIMEOUT_MS,
                "--appendonly", "yes",
                "--appendfsync", "always",
                "--save", "",
            ), name=name)
            server.port = port  # the bus port must be free and the port at most 55535
            servers.append(server)
            server.start()
        yield servers
    finally:
        stop_all(servers)


# --- cluster state -------------------------------------------------------------------------

def node_client(port):
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=10,
                       socket_connect_timeout=5)


def cluster_info(client):
    """CLUSTER INFO as a dict of str -> str (sent as two words: no client-side parsing)."""
    raw = client.execute_command("CLUSTER", "INFO")
    out = {}
    for line in raw.decode().splitlines():
        if ":" in line:
            name, value = line.split(":", 1)
            out[name] = value.strip()
    return out


def replication(client):
    return {(k.decode() if isinstance(k, bytes) else k): v
            for k, v in client.info("replication").items()}


def slot_map(client):
    """CLUSTER SLOTS as a list: slot -> the port of its primary (None if not covered)."""
    owners = [None] * SLOTS
    for entry in client.execute_command("CLUSTER", "SLOTS"):
        start, end, primary = entry[0], entry[1], entry[2]
        assert primary[0] in (b"127.0.0.1", "127.0.0.1"), f"unexpected primary {primary!r}"
        for slot in range(start, end + 1):
            owners[slot] = int(primary[1])
    return owners


def cluster_ready(clients, primaries_expected=3):
    """Every node says cluster_state:ok with all slots assigned, there are primaries_expected
    primaries, and every replica's link to its primary is up."""
    primaries = 0
    for client in clients.values():
        ci = cluster_info(client)
        if ci.get("cluster_state") != "ok" or ci.get("cluster_slots_assigned") != str(SLOTS):
            return False
        rep = replication(client)
        if rep["role"] == "master":
            primaries += 1
        elif rep.get("master_link_status") != "up":
            return False
    return primaries == primaries_expected


def agreed_slot_map(clients, dead_port=None):
    """The slot map when every node has the same complete one without dead_port, else None."""
    maps = [slot_map(c) for c in clients.values()]
    first = maps[0]
    if any(m != first for m in maps) or None in first or dead_port in first:
        return None
    return first


class Router:
    """Sends each key's commands to the primary that owns the key's slot."""

    def __init__(self, owners):
        self.owners = owners
        self.clients = {}

    def port(self, key):
        return self.owners[key_slot(key.encode())]

    def client(self, key_or_port):
        port = key_or_port if isinstance(key_or_port, int) else self.port(key_or_port)
        if port not in self.clients:
            self.clients[port] = node_client(port)
        return self.clients[port]

    def close(self):
        for c in self.clients.values():
            c.close()


# --- workload bookkeeping ------------------------------------------------------------------

class KeyLog:
    """What was sent to one key: every batch, and the ones WAIT acknowledged."""

    def __init__(self, key, kind):
        self.key = key
        self.kind = kind          # "bf" or "cf"
        self.sent = []            # every item sent, in order (repeats included)
        self.acked = []           # items of acknowledged batches (repeats included)
        self.batches = 0
        self.acked_batches = 0

    def record(self, batch, acknowledged):
        self.sent.extend(batch)
        self.batches += 1
        if acknowledged:
            self.acked.extend(batch)
            self.acked_batches += 1


def send_batch(router, log, batch):
    """BF.MADD / CF.INSERT one batch to its primary, then WAIT 1 2000 on the same connection.
    Returns the command's reply; the batch counts as acknowledged if WAIT answered >= 1."""
    pipe = router.client(log.key).pipeline(transaction=False)
    if log.kind == "bf":
        pipe.execute_command("BF.MADD", log.key, *batch)
    else:
        pipe.execute_command("CF.INSERT", log.key, "ITEMS", *batch)
    pipe.execute_command("WAIT", 1, 2000)
    reply, replicas = pipe.execute()
    assert isinstance(reply, list) and len(reply) == len(batch), (
        f"{log.key}: the batch answered {reply!r}")
    log.record(batch, replicas >= 1)
    return reply


def run_workload(router):
    """Two batches per Bloom key (hour bucket) and per cuckoo key, interleaved over devices so
    the writes move between the primaries. Each key's second batch repeats REPEATS items of its
    first. Returns {key: KeyLog}."""
    logs = {}
    for device in DEVICES:
        for bucket in BUCKETS:
            key = bloom_key(device, bucket)
            assert router.client(key).execute_command(
                "BF.RESERVE", key, BF_ERROR, BF_CAPACITY) == b"OK"
            logs[key] = KeyLog(key, "bf")
        key = cuckoo_key(device)
        assert router.client(key).execute_command("CF.RESERVE", key, CF_CAPACITY) == b"OK"
        logs[key] = KeyLog(key, "cf")
    for round_ in range(2):
        for key, log in logs.items():
            fresh = items(f"{key}:evt", BATCH - (REPEATS if round_ else 0),
                          start=0 if round_ == 0 else BATCH)
            batch = fresh + (log.sent[:REPEATS] if round_ else [])
            reply = send_batch(router, log, batch)
            if log.kind == "bf":
                # new items: 1 (a false positive at this fill, about 400 items in a filter
                # sized for 10000 at 1%, has a chance near 1e-11 per item); repeats: 0
                new = len(fresh)
                assert reply[:new] == [1] * new, (
                    f"BF.MADD {key}: {reply[:new].count(1)} of {new} new items answered 1")
                assert reply[new:] == [0] * (len(batch) - new), (
                    f"BF.MADD {key}: repeated items answered {reply[new:]!r}, expected 0")
            else:
                assert reply == [1] * len(batch), f"CF.INSERT {key} answered {reply!r}"
    return logs


# --- checks --------------------------------------------------------------------------------

def check_acknowledged_items(router, logs):
    """Every acknowledged item answers 1 to EXISTS and MEXISTS on its key's current primary;
    BF.CARD and CF.INFO count at least the acknowledged items and at most the sent ones.
    Pipelined per primary."""
    by_port = {}
    for log in logs.values():
        by_port.setdefault(router.port(log.key), []).append(log)
    for port, port_logs in by_port.items():
        pipe = router.client(port).pipeline(transaction=False)
        for log in port_logs:
            prefix = "BF" if log.kind == "bf" else "CF"
            pipe.execute_command(f"{prefix}.MEXISTS", log.key, *log.acked)
            for item in log.acked:
                pipe.execute_command(f"{prefix}.EXISTS", log.key, item)
            if log.kind == "bf":
                pipe.execute_command("BF.CARD", log.key)
            else:
                pipe.execute_command("CF.INFO", log.key)
        replies = iter(pipe.execute())
        for log in port_logs:
            prefix = "BF" if log.kind == "bf" else "CF"
            mexists = next(replies)
            exists = [next(replies) for _ in log.acked]
            missing = [item for item, a in zip(log.acked, mexists) if a != 1]
            assert not missing, (f"{prefix}.MEXISTS {log.key} on port {port}: {len(missing)} "
                                 f"acknowledged items answered 0, e.g. {missing[:3]}")
            missing = [item for item, a in zip(log.acked, exists) if a != 1]
            assert not missing, (f"{prefix}.EXISTS {log.key} on port {port}: {len(missing)} "
                                 f"acknowledged items answered 0, e.g. {missing[:3]}")
            count = next(replies)
            if log.kind == "bf":
                low, high = len(set(log.acked)), len(set(log.sent))
                assert low <= count <= high, (
                    f"BF.CARD {log.key} is {count}, expected {low} (acknowledged distinct "
                    f"items) to {high} (sent distinct items)")
            else:
                inserted = dict(zip((n.decode() for n in count[0::2]), count[1::2]))[
                    "Number of items inserted"]
                low, high = len(log.acked), len(log.sent)
                assert low <= inserted <= high, (
                    f"CF.INFO {log.key}: {inserted} items inserted, expected {low} "
                    f"(acknowledged adds) to {high} (sent adds)")


def check_absent_items(router, keys):
    """Items never added mostly answer 0 (at most the 1% rate plus a margin), so the checks of
    present items above can fail."""
    answers = []
    for key in keys:
        prefix = "BF" if key.startswith("dedup:") else "CF"
        answers += router.client(key).execute_command(f"{prefix}.MEXISTS", key,
                                                      *items(f"{key}:never", 500))
    rate = answers.count(1) / len(answers)
    assert rate <= fp_limit(0.01, len(answers)), (
        f"{answers.count(1)} of {len(answers)} never-added items answered 1")


def check_moved(client, key, owner_port):
    """A key sent to a primary that does not serve it answers MOVED to its owner."""
    with pytest.raises(redis.ResponseError) as excinfo:
        client.execute_command("BF.EXISTS", key, "x")
    expected = f"MOVED {key_slot(key.encode())} 127.0.0.1:{owner_port}"
    assert str(excinfo.value) == expected, (
        f"BF.EXISTS {key} on a node that does not serve it answered {excinfo.value!s}, "
        f"expected {expected}")


# --- the test ------------------------------------------------------------------------------

def test_acknowledged_items_survive_primary_failover(cluster_servers):
    servers = {s.port: s for s in cluster_servers}
    clients = {port: node_client(port) for port in servers}
    router = None
    try:
        # 1. the cluster: 3 primaries, 3 replicas
        create = subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in servers),
             "--cluster-replicas", "1", "--cluster-yes"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=60)
        output = create.stdout.decode(errors="replace")
        assert create.returncode == 0, f"redis-cli --cluster create failed:\n{output}"
        assert "All 16384 slots covered" in output, output
        wait_for(lambda: cluster_ready(clients), "cluster_state:ok on every node and every "
                 "replica's master_link_status:up", timeout=30, interval=0.1)
        owners = wait_for(lambda: agreed_slot_map(clients), "one slot map on every node",
                          timeout=10, interval=0.1)
        primaries = sorted(set(owners))
        assert len(primaries) == 3, f"slot map primaries {primaries}"
        replica_of = {}
        for port, client in clients.items():
            rep = replication(client)
            if rep["role"] == "slave":
                replica_of[port] = rep["master_port"]
        assert sorted(replica_of.values()) == primaries, f"replicas {replica_of}"

        # 2. the workload, routed by slot
        router = Router(owners)
        all_keys = [bloom_key(d, b) for d in DEVICES for b in BUCKETS] + \
                   [cuckoo_key(d) for d in DEVICES]
        pipe = clients[primaries[0]].pipeline(transaction=False)
        for key in all_keys:
            pipe.execute_command("CLUSTER", "KEYSLOT", key)
        assert pipe.execute() == [key_slot(k.encode()) for k in all_keys]
        assert (key_slot(bloom_key("dev17", BUCKETS[0]).encode()) ==
                key_slot(cuckoo_key("dev17").encode())), "hash tags put a device in one slot"

        started = time.monotonic()
        logs = run_workload(router)
        workload_seconds = time.monotonic() - started

        keys_on = {p: sorted(k for k in all_keys if router.port(k) == p) for p in primaries}
        for port in primaries:
            assert keys_on[port], f"no key routed to primary {port}: {keys_on}"
            stored = sorted(k.decode() for k in clients[port].keys("*"))
            assert stored == keys_on[port], f"primary {port} holds {len(stored)} keys, " \
                                            f"{len(keys_on[port])} were routed to it"
        for replica, primary in replica_of.items():
            wait_for(lambda: clients[replica].dbsize() == clients[primary].dbsize(),
                     f"replica {replica} to hold its primary's {len(keys_on[primary])} keys",
                     timeout=10)
        batches = sum(log.batches for log in logs.values())
        acked = sum(log.acked_batches for log in logs.values())
        assert acked >= batches // 2, (
            f"only {acked} of {batches} batches acknowledged by WAIT 1 2000 "
            f"(workload took {workload_seconds:.1f}s)")
        # the module's commands are cluster-aware: a node that does not serve a key redirects
        other = next(p for p in primaries if p != router.port(all_keys[0]))
        check_moved(clients[other], all_keys[0], router.port(all_keys[0]))

        # 3. kill -9 the primary with the most acknowledged keys; its replica takes over
        victim = max(primaries, key=lambda p: sum(
            1 for k in keys_on[p] if logs[k].acked_batches))
        victim_keys = keys_on[victim]
        assert any(logs[k].kind == "bf" and logs[k].acked for k in victim_keys)
        assert any(logs[k].kind == "cf" and logs[k].acked for k in victim_keys)
        promoted = next(r for r, p in replica_of.items() if p == victim)
        victim_slots = [s for s in range(SLOTS) if owners[s] == victim]
        clients.pop(victim).close()
        router.close()
        servers[victim].kill9()
        killed_at = time.monotonic()

        survivors = clients
        wait_for(lambda: replication(survivors[promoted])["role"] == "master",
                 f"replica {promoted} to be promoted", timeout=FAILOVER_TIMEOUT, interval=0.1)
        wait_for(lambda: all(cluster_info(c).get("cluster_state") == "ok"
                             for c in survivors.values()),
                 "cluster_state:ok on the 5 live nodes", timeout=FAILOVER_TIMEOUT, interval=0.1)
        owners = wait_for(lambda: agreed_slot_map(survivors, dead_port=victim),
                          "a slot map without the killed primary on every live node",
                          timeout=FAILOVER_TIMEOUT, interval=0.1)
        failover_seconds = time.monotonic() - killed_at
        assert [s for s in range(SLOTS) if owners[s] == promoted] == victim_slots, (
            f"the promoted replica {promoted} does not serve exactly the killed primary's slots")
        assert sorted(set(owners)) == sorted(set(primaries) - {victim} | {promoted})

        router = Router(owners)
        assert all(router.port(k) == promoted for k in victim_keys)
        check_acknowledged_items(router, logs)
        check_absent_items(router, victim_keys)
        # the surviving primaries redirect to the promoted replica
        other = next(p for p in primaries if p != victim)
        check_moved(clients[other], victim_keys[0], promoted)
        # the repeated items were added twice to the cuckoo filters
        for key in victim_keys:
            log = logs[key]
            if log.kind == "cf" and log.acked_batches == 2:
                counts = [router.client(key).execute_command("CF.COUNT", key, item)
                          for item in log.sent[:REPEATS]]
                assert all(c >= 2 for c in counts), f"CF.COUNT {key} of repeats: {counts}"

        # the promoted replica takes writes for the slots it took over
        new_primary = router.client(promoted)
        moved_devices = [d for d in DEVICES if router.port(cuckoo_key(d)) == promoted][:5]
        assert moved_devices
        for device in moved_devices:
            key = bloom_key(device, "2026-12-02T12")
            assert new_primary.execute_command("BF.RESERVE", key, BF_ERROR,
                                               BF_CAPACITY) == b"OK"
            batch = items(f"{key}:evt", BATCH)
            assert new_primary.execute_command("BF.MADD", key, *batch) == [1] * BATCH
            existing = bloom_key(device, BUCKETS[0])
            card = new_primary.execute_command("BF.CARD", existing)
            more = items(f"{existing}:after", BATCH)
            assert new_primary.execute_command("BF.MADD", existing, *more) == [1] * BATCH
            ckey = cuckoo_key(device)
            inserted = info(new_primary, "CF.INFO", ckey)["Number of items inserted"]
            cmore = items(f"{ckey}:after", BATCH)
            assert new_primary.execute_command("CF.INSERT", ckey, "ITEMS",
                                               *cmore) == [1] * BATCH
            assert new_primary.execute_command("BF.MEXISTS", key, *batch) == [1] * BATCH
            assert new_primary.execute_command("BF.CARD", key) == BATCH
            assert new_primary.execute_command("BF.MEXISTS", existing, *more) == [1] * BATCH
            assert new_primary.execute_command("BF.CARD", existing) == card + BATCH
            assert new_primary.execute_command("CF.MEXISTS", ckey, *cmore) == [1] * BATCH
            assert info(new_primary, "CF.INFO", ckey)["Number of items inserted"] == \
                inserted + BATCH
        assert all(cluster_info(c).get("cluster_state") == "ok" for c in survivors.values())
        print(f"workload {workload_seconds:.1f}s ({acked}/{batches} batches acknowledged), "
              f"failover {failover_seconds:.1f}s, killed {victim} -> promoted {promoted}, "
              f"{len(victim_keys)} keys moved")
    finally:
        if router is not None:
            router.close()
        for c in clients.values():
            c.close()
