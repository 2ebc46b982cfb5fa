#!/usr/bin/env python3
"""aioice peer for the WCSMedia ICE interop test.

Talks JSON lines: prints {"ufrag","pwd","candidates"} after gathering on 127.0.0.1, reads the
same from stdin, connects, then echoes one datagram back prefixed with "pong:" and reports
events. Usage: aioice_peer.py controlling|controlled|controlling-lite (the last: the other side
is ICE-lite).
"""
import asyncio
import json
import sys

import aioice
import aioice.ice


def emit(obj):
    print(json.dumps(obj), flush=True)


async def read_line():
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line:
        raise SystemExit("stdin closed")
    return json.loads(line)


async def main():
    controlling = sys.argv[1].startswith("controlling")
    # aioice skips loopback addresses on purpose; the test runs on 127.0.0.1 only.
    aioice.ice.get_host_addresses = lambda *a, **k: ["127.0.0.1"]
    conn = aioice.Connection(ice_controlling=controlling, components=1, use_ipv6=False)
    conn.remote_is_lite = sys.argv[1] == "controlling-lite"
    await conn.gather_candidates()
    emit({
        "ufrag": conn.local_username,
        "pwd": conn.local_password,
        "candidates": [
            {"foundation": c.foundation, "component": c.component, "priority": c.priority,
             "host": c.host, "port": c.port, "type": c.type}
            for c in conn.local_candidates
        ],
    })
    remote = await read_line()
    conn.remote_username = remote["ufrag"]
    conn.remote_password = remote["pwd"]
    for c in remote["candidates"]:
        await conn.add_remote_candidate(aioice.Candidate(
            foundation=c["foundation"], component=c["component"], transport="udp",
            priority=c["priority"], host=c["host"], port=c["port"], type=c["type"]))
    await conn.add_remote_candidate(None)
    try:
        await asyncio.wait_for(conn.connect(), 10)
    except Exception as error:  # report and stop: the test fails with this reason
        emit({"event": "failed", "reason": repr(error)})
        return
    emit({"event": "connected"})
    data = await asyncio.wait_for(conn.recv(), 10)
    emit({"event": "received", "data": data.decode(errors="replace")})
    await conn.send(b"pong:" + data)
    await read_line()  # the test says when it is done
    await conn.close()
    emit({"event": "closed"})


asyncio.run(main())
