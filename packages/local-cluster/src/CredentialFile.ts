/**
 * Writing a file that holds credentials (a kubeconfig with a client key or a token):
 * readable by its owner alone from its first byte, whatever file it replaces, and
 * never written through a symbolic link someone else may have pointed elsewhere.
 */
import { randomBytes } from "node:crypto"
import { lstat, open, rename, rm } from "node:fs/promises"
import { basename, dirname, join } from "node:path"

const OWNER_ONLY = 0o600

/** Why `path` cannot take a credential file, or undefined when it can. */
const refusal = async (path: string): Promise<string | undefined> => {
  const existing = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (existing === undefined || existing.isFile()) return undefined
  return existing.isSymbolicLink()
    ? `${path} is a symbolic link; credentials are never written through one: remove it, or name the file it points to`
    : `${path} exists and is not a regular file`
}

/** Why no file can be created in `directory`, in terms of the directory. */
const cannotCreateIn = (directory: string, error: NodeJS.ErrnoException): string => {
  switch (error.code) {
    case "ENOENT":
      return `the directory ${directory} does not exist`
    case "ENOTDIR":
      return `${directory} is not a directory`
    case "EACCES":
    case "EPERM":
      return `no permission to create a file in ${directory}`
    default:
      return `cannot create a file in ${directory}: ${error.code ?? error.message}`
  }
}

/**
 * Writes `text` to `path` as a new file of mode 0600 beside it, then renames it into
 * place: an existing 0644 file is replaced, not rewritten with its old permissions,
 * and a reader never sees half a file. Fails with a sentence naming the path.
 */
export const writeCredentialFile = async (path: string, text: string): Promise<void> => {
  const refused = await refusal(path)
  if (refused !== undefined) throw new Error(refused)
  const directory = dirname(path)
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
  // "wx": a new file only, so a link planted at the temporary name is never followed.
  const file = await open(temporary, "wx", OWNER_ONLY).catch((error: NodeJS.ErrnoException) => {
    // Node's message names the temporary file, which the person never gave.
    throw new Error(cannotCreateIn(directory, error), { cause: error })
  })
  try {
    await file.writeFile(text)
    // The umask may narrow the mode at creation but never widens it; chmod makes it exact.
    await file.chmod(OWNER_ONLY)
    await file.sync()
    await file.close()
    await rename(temporary, path)
  } catch (error) {
    await file.close().catch(() => undefined)
    await rm(temporary, { force: true })
    throw error
  }
}
