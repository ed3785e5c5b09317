"""What JavaScript's JSON.parse makes of a JSON text: node reads it on
stdin, and prints the type and the value of each object's key.  A number
is printed as BigInt(number), the integer the double holds: String(number)
prints the shortest digits that read back as the same double, which for
some IDs are the ID's own digits although the number is another."""

import subprocess

READ = r"""
const key = process.argv[1];
let s = "";
process.stdin.on("data", (d) => { s += d; }).on("end", () => {
  for (const o of [].concat(JSON.parse(s))) {
    const v = o[key];
    console.log(typeof v, typeof v === "number" ? BigInt(v).toString() : String(v));
  }
});
"""


def node_ids(text, key="id"):
    """[(typeof, digits)] of each object's key, in order."""
    out = subprocess.run(["node", "-e", READ, key], input=text, capture_output=True,
                         text=True, check=True).stdout
    return [tuple(line.split(" ", 1)) for line in out.splitlines()]


def not_doubles(ids):
    """The IDs a double cannot hold: JSON.parse can only return another number."""
    return [i for i in ids if int(float(i)) != i]
