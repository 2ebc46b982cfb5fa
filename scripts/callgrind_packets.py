"""Received RTP packets in a callgrind run of PipelineBench play-only: the calls into
NativeMediaConnection.receiveRTP, read from `callgrind_annotate --tree=caller` output.
Shared by play-instructions.sh and play-cache-misses.sh."""
import re


def calls(path, name):
    """Calls into the function whose symbol ends with `name`, summed over its callers."""
    total = 0
    for block in open(path).read().split("\n\n"):
        lines = block.strip("\n").split("\n")
        star = [l for l in lines if "*  " in l]
        if star and (name + " [") in star[0]:
            for l in lines:
                m = re.search(r"\(([\d,]+)x\)", l)
                if m and " < " in l:
                    total += int(m.group(1).replace(",", ""))
    return total


def packets(path):
    return calls(path, "NativeMediaConnectionC10receiveRTPyys6UInt32V_SWtF")
