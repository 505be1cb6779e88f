/**
 * The flags that name a session, its Pod and its ports, declared and checked the same
 * way by every command that takes them (`render`, `publish`, `status`, `check`): the
 * first bad one is named, with what would be valid, in one line.
 */
import { Options } from "@effect/cli"
import { Either } from "effect"
import { parsePorts, parsePortSpec, type PortMapping } from "../domain/Session.js"
import { isDns1123Subdomain } from "../domain/Validation.js"

/** `--session ID`, described as the command uses it. */
export const sessionFlag = (description: string): Options.Options<string> =>
  Options.text("session").pipe(Options.withPseudoName("ID"), Options.withDescription(description))

/** `--port PORT[/tcp|/udp]`, one value; the command says how often it may repeat. */
export const portFlag = (description: string): Options.Options<string> =>
  Options.text("port").pipe(Options.withPseudoName("PORT[/tcp|/udp]"), Options.withDescription(description))

/** `--pod NAME`, described as the command uses it. */
export const podFlag = (description: string): Options.Options<string> =>
  Options.text("pod").pipe(Options.withPseudoName("NAME"), Options.withDescription(description))

/** `--pod-uid UID`, described as the command uses it. */
export const podUidFlag = (description: string): Options.Options<string> =>
  Options.text("pod-uid").pipe(Options.withPseudoName("UID"), Options.withDescription(description))

/** `--port` values (`8080`, `9090/tcp`, `5000/udp`) as mappings: range, protocol and duplicates checked. */
export const parsePortFlags = (specs: ReadonlyArray<string>): Either.Either<ReadonlyArray<PortMapping>, string> =>
  Either.gen(function*() {
    if (specs.length === 0) {
      // A Service without ports is refused by the API server.
      return yield* Either.left("at least one --port is required, e.g. --port 8080 or --port 5000/udp")
    }
    const mappings: Array<PortMapping> = []
    for (const spec of specs) mappings.push(yield* parsePortSpec(spec))
    return yield* parsePorts(mappings)
  })

/** `--pod` and `--pod-uid`: the owner every routing object names. */
export const parsePodFlags = (
  podName: string,
  podUid: string
): Either.Either<{ readonly podName: string; readonly podUid: string }, string> => {
  if (isDns1123Subdomain(podName).length > 0) {
    return Either.left(
      `--pod=${
        JSON.stringify(podName)
      } must be a Pod name: at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit`
    )
  }
  // The owner reference is how the cluster collects the objects with the Pod: a
  // wrong uid would have them deleted at once, so at least refuse a blank one.
  if (podUid.trim() === "" || /\s/.test(podUid)) {
    return Either.left(`--pod-uid=${JSON.stringify(podUid)} must be the Pod's metadata.uid, e.g. 6f1c2a9e-...`)
  }
  return Either.right({ podName, podUid })
}
