/**
 * Label and field selectors as the API server parses them: the same grammar, the
 * same validation of keys and values, and the same error texts, so a selector the
 * real server refuses with 400 is refused here too.
 */

/** One requirement of a label selector. */
export interface Requirement {
  readonly key: string
  readonly operator: "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt"
  readonly values: ReadonlyArray<string>
}

/** A parsed label selector: every requirement must hold. Empty selects everything. */
export interface LabelSelector {
  readonly requirements: ReadonlyArray<Requirement>
}

/** Why a selector does not parse; the text is the server's 400 message. */
export class SelectorError {
  readonly _tag = "SelectorError"
  constructor(readonly message: string) {}
}

type Token =
  | { readonly kind: "id"; readonly text: string }
  | { readonly kind: "sym"; readonly text: "!" | "!=" | "=" | "==" | "(" | ")" | "," | ">" | "<" }
  | { readonly kind: "end"; readonly text: "" }

const SPECIAL = new Set(["=", "!", "(", ")", ",", ">", "<"])
const WHITESPACE = /\s/

const lex = (input: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < input.length) {
    const ch = input[i]!
    if (WHITESPACE.test(ch)) {
      i++
      continue
    }
    if (SPECIAL.has(ch)) {
      const two = input.slice(i, i + 2)
      if (two === "!=" || two === "==") {
        tokens.push({ kind: "sym", text: two })
        i += 2
      } else {
        tokens.push({ kind: "sym", text: ch as "!" | "=" | "(" | ")" | "," | ">" | "<" })
        i++
      }
      continue
    }
    let j = i
    while (j < input.length && !SPECIAL.has(input[j]!) && !WHITESPACE.test(input[j]!)) j++
    tokens.push({ kind: "id", text: input.slice(i, j) })
    i = j
  }
  tokens.push({ kind: "end", text: "" })
  return tokens
}

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

const NAME_PART_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

/** Why `key` is not a valid label key (a qualified name), or undefined. */
export const labelKeyProblem = (key: string): string | undefined => {
  const parts = key.split("/")
  let name: string
  if (parts.length === 1) {
    name = parts[0]!
  } else if (parts.length === 2) {
    const prefix = parts[0]!
    name = parts[1]!
    if (prefix.length === 0) return "prefix part must be non-empty"
    if (prefix.length > 253) return "prefix part must be no more than 253 characters"
    if (!DNS1123_SUBDOMAIN.test(prefix)) {
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    }
  } else {
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
  }
  if (name.length === 0) return "name part must be non-empty"
  if (name.length > 63) return "name part must be no more than 63 characters"
  if (!QUALIFIED_NAME_PART.test(name)) return NAME_PART_MESSAGE
  return undefined
}

/** Why `value` is not a valid label value, or undefined. */
export const labelValueProblem = (value: string): string | undefined => {
  if (value.length > 63) return "must be no more than 63 characters"
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
  }
  return undefined
}

const goQuote = (s: string): string => JSON.stringify(s)
const goList = (values: ReadonlyArray<string>): string => `[]string{${values.map(goQuote).join(", ")}}`

const BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"

class Parser {
  private position = 0
  constructor(private readonly tokens: ReadonlyArray<Token>) {}

  // In value position the keywords `in` and `notin` are plain identifiers.
  private peek(): Token {
    return this.tokens[this.position]!
  }
  private next(): Token {
    const token = this.tokens[this.position]!
    if (token.kind !== "end") this.position++
    return token
  }

  parse(): Array<Requirement> {
    const requirements: Array<Requirement> = []
    for (;;) {
      const token = this.peek()
      if (token.kind === "end") return requirements
      if (token.kind === "id" || token.text === "!") {
        let requirement: Requirement
        try {
          requirement = this.requirement()
        } catch (e) {
          if (e instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${e.message}`)
          throw e
        }
        requirements.push(requirement)
        const after = this.next()
        if (after.kind === "end") return requirements
        if (after.text === ",") {
          const following = this.peek()
          if (following.kind !== "id" && following.text !== "!") {
            throw new SelectorError(`found '${following.text}', expected: identifier after ','`)
          }
          continue
        }
        throw new SelectorError(`found '${after.text}', expected: ',' or 'end of string'`)
      }
      throw new SelectorError(`found '${token.text}', expected: !, identifier, or 'end of string'`)
    }
  }

  private requirement(): Requirement {
    let negated = false
    let token = this.next()
    if (token.text === "!" && token.kind === "sym") {
      negated = true
      token = this.next()
    }
    if (token.kind !== "id") throw new SelectorError(`found '${token.text}', expected: identifier`)
    const key = token.text
    const keyProblem = labelKeyProblem(key)
    if (keyProblem !== undefined) throw new SelectorError(`key: Invalid value: ${goQuote(key)}: ${keyProblem}`)
    const lookahead = this.peek()
    if (negated || lookahead.kind === "end" || lookahead.text === ",") {
      return { key, operator: negated ? "!" : "exists", values: [] }
    }
    const op = this.next()
    let operator: Requirement["operator"]
    if (op.kind === "id" && op.text === "in") operator = "in"
    else if (op.kind === "id" && op.text === "notin") operator = "notin"
    else if (op.text === "=") operator = "="
    else if (op.text === "==") operator = "=="
    else if (op.text === "!=") operator = "!="
    else if (op.text === ">") operator = "gt"
    else if (op.text === "<") operator = "lt"
    else throw new SelectorError(`found '${op.text}', expected: ${BINARY_OPERATORS}`)
    const values = operator === "in" || operator === "notin" ? this.valueSet() : this.exactValue()
    return validated({ key, operator, values })
  }

  private exactValue(): Array<string> {
    const token = this.peek()
    if (token.kind === "end" || token.text === ",") return [""]
    this.next()
    if (token.kind === "id") return [token.text]
    throw new SelectorError(`found '${token.text}', expected: identifier`)
  }

  private valueSet(): Array<string> {
    const open = this.next()
    if (open.text !== "(") throw new SelectorError(`found '${open.text}' expected: '('`)
    const first = this.peek()
    if (first.text === ")") {
      this.next()
      // `()` is the set holding the empty string, as in the server's parser.
      return [""]
    }
    if (first.kind !== "id" && first.text !== ",") {
      throw new SelectorError(`found '${first.text}', expected: ',', ')' or identifier`)
    }
    // The server's parseIdentifiersList, step for step: its messages depend on which token it is at.
    const values = new Set<string>()
    for (;;) {
      const token = this.next()
      if (token.kind === "id") {
        values.add(token.text)
        const after = this.peek()
        if (after.text === ",") continue
        if (after.text === ")") break
        throw new SelectorError(`found '${after.text}', expected: ',' or ')'`)
      }
      if (token.text === ",") {
        // `(,`, `,,` and `,)` stand for empty values.
        if (values.size === 0) values.add("")
        const after = this.peek()
        if (after.text === ")") {
          values.add("")
          break
        }
        if (after.text === ",") values.add("")
        continue
      }
      throw new SelectorError(`found '${token.text}', expected: ',', or identifier`)
    }
    this.next()
    return [...values].sort()
  }
}

const validated = (requirement: Requirement): Requirement => {
  const problems: Array<string> = []
  const { operator, values } = requirement
  if ((operator === "in" || operator === "notin") && values.length === 0) {
    problems.push(`values: Invalid value: ${goList(values)}: for 'in', 'notin' operators, values set can't be empty`)
  }
  if ((operator === "=" || operator === "==" || operator === "!=") && values.length !== 1) {
    problems.push(`values: Invalid value: ${goList(values)}: exact-match compatibility requires one single value`)
  }
  if (operator === "gt" || operator === "lt") {
    values.forEach((v, i) => {
      if (!/^[+-]?\d+$/.test(v)) {
        problems.push(
          `values[${i}]: Invalid value: ${goQuote(v)}: for 'Gt', 'Lt' operators, the value must be an integer`
        )
      }
    })
  }
  values.forEach((v, i) => {
    const problem = labelValueProblem(v)
    if (problem !== undefined) {
      problems.push(`values[${i}][${requirement.key}]: Invalid value: ${goQuote(v)}: ${problem}`)
    }
  })
  if (problems.length === 1) throw new SelectorError(problems[0]!)
  if (problems.length > 1) throw new SelectorError(`[${problems.join(", ")}]`)
  return requirement
}

/** Parses a label selector (`a=b,c!=d,e in (f,g),!h`); throws `SelectorError` when it does not parse. */
export const parseLabelSelectorUnsafe = (input: string): LabelSelector => ({
  requirements: new Parser(lex(input)).parse()
})

/** Parses a label selector, or answers why it does not parse. */
export const parseLabelSelector = (input: string): LabelSelector | SelectorError => {
  try {
    return parseLabelSelectorUnsafe(input)
  } catch (e) {
    if (e instanceof SelectorError) return e
    throw e
  }
}

/** Selects every object. */
export const everything: LabelSelector = { requirements: [] }

const toInteger = (value: string): number | undefined => (/^[+-]?\d+$/.test(value) ? Number(value) : undefined)

/** Whether `labels` satisfy every requirement; `!=` and `notin` hold when the key is absent. */
export const matchesLabels = (
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined
): boolean =>
  selector.requirements.every((r) => {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key)
    const value = has ? labels[r.key]! : undefined
    switch (r.operator) {
      case "=":
      case "==":
      case "in":
        return value !== undefined && r.values.includes(value)
      case "!=":
      case "notin":
        return value === undefined || !r.values.includes(value)
      case "exists":
        return has
      case "!":
        return !has
      case "gt":
      case "lt": {
        const actual = value === undefined ? undefined : toInteger(value)
        const bound = toInteger(r.values[0] ?? "")
        if (actual === undefined || bound === undefined) return false
        return r.operator === "gt" ? actual > bound : actual < bound
      }
    }
  })

/** One term of a field selector. */
export interface FieldRequirement {
  readonly field: string
  readonly operator: "=" | "!="
  readonly value: string
}

/** The fields a type can be selected by, and how the server refuses any other. */
export interface SelectableFields {
  readonly fields: ReadonlySet<string>
  readonly unsupported: (field: string) => string
}

/** What every resource supports, worded as for custom resources and types with no fields of their own. */
export const metadataFields: SelectableFields = {
  fields: new Set(["metadata.name", "metadata.namespace"]),
  unsupported: (field) => `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`
}

/**
 * Parses a field selector (`metadata.name=x,metadata.namespace!=y`, with `\` escapes).
 * Only the fields `supported` names are accepted; by default those every resource has.
 */
export const parseFieldSelector = (
  input: string,
  supported: SelectableFields = metadataFields
): ReadonlyArray<FieldRequirement> | SelectorError => {
  if (input.trim() === "") return []
  const requirements: Array<FieldRequirement> = []
  for (const term of splitUnescaped(input)) {
    const parsed = splitTerm(term)
    if (parsed === undefined) return new SelectorError(`invalid selector: '${input}'; can't understand '${term}'`)
    const [field, operator, value] = parsed
    if (!supported.fields.has(field)) return new SelectorError(supported.unsupported(field))
    requirements.push({ field, operator, value })
  }
  return requirements
}

// Terms are separated by commas not preceded by a backslash.
const splitUnescaped = (input: string): Array<string> => {
  const terms: Array<string> = []
  let current = ""
  for (let i = 0; i < input.length; i++) {
    const ch = input[i]!
    if (ch === "\\" && i + 1 < input.length) {
      current += ch + input[i + 1]!
      i++
    } else if (ch === ",") {
      terms.push(current)
      current = ""
    } else {
      current += ch
    }
  }
  terms.push(current)
  return terms
}

const unescape = (s: string): string => s.replace(/\\(.)/g, "$1")

// The first unescaped `!=`, `==` or `=` splits a term into field, operator and value.
const splitTerm = (term: string): [string, "=" | "!=", string] | undefined => {
  for (let i = 0; i < term.length; i++) {
    const ch = term[i]!
    if (ch === "\\") {
      i++
      continue
    }
    const two = term.slice(i, i + 2)
    if (two === "!=" || two === "==") {
      return [unescape(term.slice(0, i)).trim(), two === "!=" ? "!=" : "=", unescape(term.slice(i + 2)).trim()]
    }
    if (ch === "=") return [unescape(term.slice(0, i)).trim(), "=", unescape(term.slice(i + 1)).trim()]
  }
  return undefined
}

/** Whether an object's selectable fields (absent ones read as "") satisfy a parsed field selector. */
export const matchesFields = (
  requirements: ReadonlyArray<FieldRequirement>,
  fields: Readonly<Record<string, string>>
): boolean =>
  requirements.every((r) => {
    const value = fields[r.field] ?? ""
    return r.operator === "=" ? value === r.value : value !== r.value
  })
