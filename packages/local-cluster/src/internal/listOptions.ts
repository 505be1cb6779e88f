/**
 * The list options of a list or watch request as the API server's handler reads
 * them: the watch-list defaulting (`SetListOptionsDefaults` with WatchList on), then
 * `ValidateListOptions`, whose refusals are a 422 on `ListOptions.meta.k8s.io`.
 * Watch-list (`sendInitialEvents=true`) is how client-go 1.35, and so kubectl's
 * `wait`, `delete` and `get -w`, list: initial ADDED events, then a bookmark.
 */
import type { Status } from "session-routing/kubernetes"
import { invalidOptions } from "./storeStatus.js"

/** What a watch starts with, once the options are defaulted and valid. */
export interface WatchStart {
  /** true: the current state as ADDED events first; false: changes only; unset: the legacy rules of `resourceVersion`. */
  readonly sendInitialEvents: boolean | undefined
}

const NOT_OLDER_THAN = "NotOlderThan"
const EXACT = "Exact"

/**
 * Go's query conversion of a `*bool`: only `0` and `false` (any case) are false,
 * anything else, even an empty value, is true; absent is unset.
 */
const goBool = (value: string | null): boolean | undefined =>
  value === null ? undefined : !(value === "0" || value.toLowerCase() === "false")

const forbidden = (field: string, detail: string) => ({
  reason: "FieldValueForbidden",
  field,
  message: `Forbidden: ${detail}`
})
const notSupported = (field: string, value: string, supported: ReadonlyArray<string>) => ({
  reason: "FieldValueNotSupported",
  field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${
    supported.map((s) => JSON.stringify(s)).join(", ")
  }`
})

type OptionError = ReturnType<typeof forbidden>

const refusal = (errors: ReadonlyArray<OptionError>): Status | undefined =>
  errors.length === 0 ? undefined : invalidOptions("ListOptions", errors)

/** A list's options: `resourceVersionMatch` needs a `resourceVersion`, and `sendInitialEvents` belongs to watches. */
export const listOptionsProblem = (query: URLSearchParams): Status | undefined => {
  const match = query.get("resourceVersionMatch") ?? ""
  const resourceVersion = query.get("resourceVersion") ?? ""
  const errors: Array<OptionError> = []
  if (match !== "") {
    if (resourceVersion === "") {
      errors.push(
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
      )
    }
    if ((query.get("continue") ?? "") !== "") {
      errors.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    }
    if (match !== EXACT && match !== NOT_OLDER_THAN) {
      errors.push(notSupported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]))
    }
    if (match === EXACT && resourceVersion === "0") {
      errors.push(
        forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`)
      )
    }
  }
  if (query.has("sendInitialEvents")) {
    errors.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
  }
  return refusal(errors)
}

/**
 * A watch's options: a legacy watch from no version or `0` becomes a watch-list
 * (so with bookmarks allowed it too ends its initial events with the marked
 * bookmark), and `sendInitialEvents` and `resourceVersionMatch=NotOlderThan` go
 * together.
 */
export const watchOptions = (query: URLSearchParams): WatchStart | Status => {
  let sendInitialEvents = goBool(query.get("sendInitialEvents"))
  let match = query.get("resourceVersionMatch") ?? ""
  const resourceVersion = query.get("resourceVersion") ?? ""
  if (sendInitialEvents === undefined && match === "" && (resourceVersion === "" || resourceVersion === "0")) {
    sendInitialEvents = true
    match = NOT_OLDER_THAN
  }
  const errors: Array<OptionError> = []
  if (sendInitialEvents !== undefined && match !== NOT_OLDER_THAN) {
    errors.push(
      forbidden("resourceVersionMatch", `sendInitialEvents requires setting resourceVersionMatch to ${NOT_OLDER_THAN}`)
    )
  }
  if (match !== "") {
    if (sendInitialEvents === undefined) {
      errors.push(
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
        )
      )
    }
    if (match !== NOT_OLDER_THAN) errors.push(notSupported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
    if ((query.get("continue") ?? "") !== "") {
      errors.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    }
  }
  return refusal(errors) ?? { sendInitialEvents }
}
