import { describe, expect, it } from "@effect/vitest"
import { nextSerial } from "../src/Pki.js"

describe("certificate serial numbers", () => {
  it("are whole bytes, positive, with no padding byte OpenSSL would refuse", () => {
    for (let i = 0; i < 2_000; i++) {
      const serial = nextSerial()
      expect(serial).toMatch(/^[0-9a-f]{32}$/)
      const first = Number.parseInt(serial.slice(0, 2), 16)
      expect(first).toBeGreaterThanOrEqual(0x01)
      expect(first).toBeLessThanOrEqual(0x7f)
    }
  })
})
