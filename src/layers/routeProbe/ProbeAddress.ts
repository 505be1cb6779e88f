/**
 * Which addresses a probe may reach when the address came from a status: never the
 * runner's own host (loopback), the link-local range with the cloud metadata services
 * in it, or the unspecified address. Whoever can write an Ingress's or a Gateway's
 * status could otherwise point the probe there and read the answer's status code back.
 */
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"

const ranges: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6", string]> = [
  ["127.0.0.0", 8, "ipv4", "a loopback address"],
  ["169.254.0.0", 16, "ipv4", "a link-local address (cloud metadata services live there)"],
  ["0.0.0.0", 8, "ipv4", "an unspecified address"],
  ["::1", 128, "ipv6", "a loopback address"],
  ["::", 128, "ipv6", "an unspecified address"],
  ["fe80::", 10, "ipv6", "a link-local address"],
  ["fd00:ec2::254", 128, "ipv6", "a cloud metadata address"]
]

const lists = ranges.map(([network, prefix, family, why]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, family)
  return { list, why }
})

/** IPv4 written as IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 it is. */
const unmapped = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped?.[1] ?? address
}

/** Why a probe must not go to this IP address, or undefined when it may. */
export const disallowedIp = (ip: string): string | undefined => {
  const address = unmapped(ip)
  const family = isIP(address) === 6 ? "ipv6" : "ipv4"
  return lists.find(({ list }) => list.check(address, family))?.why
}

/** Where a probe connects: an address it may reach, or why it may not. */
export type Resolved =
  | { readonly ok: true; readonly ip: string }
  | { readonly ok: false; readonly address: string; readonly why: string }

/**
 * The IP a status address names, checked: a literal IP as it is, a hostname through
 * DNS, every address it resolves to (one of them loopback is enough to refuse it).
 * The probe then connects to the IP checked here, so a second lookup cannot answer
 * differently.
 */
export const resolveForProbe = async (address: string): Promise<Resolved> => {
  const ips = isIP(address) !== 0 ? [address] : (await lookup(address, { all: true })).map((a) => a.address)
  for (const ip of ips) {
    const why = disallowedIp(ip)
    if (why !== undefined) return { ok: false, address: ip === address ? ip : `${address} (${ip})`, why }
  }
  return { ok: true, ip: ips[0]! }
}
