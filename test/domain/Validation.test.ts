/**
 * apimachinery's string rules on their own. Names, labels and ports are also
 * checked through the objects LocalCluster validates (packages/local-cluster/test/Validation.test.ts)
 * and the session ids and hosts the domain builds (Session.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { isIPAddress } from "../../src/domain/Validation.js"

describe("isIPAddress", () => {
  it.each(["10.0.0.1", "010.0.0.1", "::1", "fe80::1", "2001:db8::8a2e:370:7334", "::ffff:10.0.0.1", "1:2:3:4:5:6:7:8"])(
    "reads %s as an IP address",
    (value) => expect(isIPAddress(value)).toBe(true)
  )
  it.each(["10.0.0", "256.0.0.1", "a.b.c.d", "1:2:3:4:5:6:7:8:9", "1::2::3", "telo.run", "fe80::1%eth0"])(
    "does not read %s as one",
    (value) => expect(isIPAddress(value)).toBe(false)
  )
})
