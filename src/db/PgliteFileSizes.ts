/**
 * PostgreSQL learns a relation's length by seeking to its end (`lseek(fd, 0, SEEK_END)`, in
 * `smgrnblocks`): when it plans a statement, for each table and index it reads, and when an insert
 * looks for room. Natively that is a cheap system call; PGlite's Node file system (Emscripten's
 * NODEFS) answers each one with `fs.fstatSync`, a system call and a `Stats` object, which was
 * about 6 % of an embedded server's CPU at 50 concurrent turns (bench/README.md, "PGlite's file
 * lengths").
 *
 * Only this PGlite writes its data directory (two processes on one would corrupt it whatever the
 * lengths), and a file's length changes only through the file system's own operations: a write
 * (the length grows to the write's end), a truncation, an open (which may truncate). So a regular
 * file's length is kept on its node once read, moved by each write past it, and forgotten on a
 * truncation or an open, when the next seek reads it again. Emscripten keeps one node per path, so
 * every descriptor of a file sees the same length.
 */
import type { PGlite } from "@electric-sql/pglite"

/** The node a file's streams share, with the length kept for it. */
interface FileNode {
  readonly mode: number
  knownSize?: number | undefined
}

interface Stream {
  readonly node: FileNode
}

type StreamOps = Record<string, (...args: Array<any>) => any> & {
  llseek: (stream: Stream, offset: number, whence: number) => number
  write: (stream: Stream, buffer: Uint8Array, offset: number, length: number, position: number, canOwn?: boolean) => number
  setattr: (stream: Stream, attributes: { readonly size?: number }) => void
  open: (stream: Stream) => void
}

type NodeOps = Record<string, (...args: Array<any>) => any> & {
  setattr: (node: FileNode, attributes: { readonly size?: number }) => void
}

interface EmscriptenFs {
  readonly filesystems: { readonly NODEFS?: { readonly stream_ops: StreamOps; readonly node_ops: NodeOps } }
  readonly isFile: (mode: number) => boolean
}

const SEEK_END = 2
const kept = Symbol("cairn/PgliteFileSizes")

/** Keeps file lengths in memory for this PGlite's NODEFS (each PGlite has its own file system). */
export const keepFileSizes = (db: PGlite): void => {
  const fs = db.Module.FS as unknown as EmscriptenFs
  const nodefs = fs.filesystems.NODEFS
  if (nodefs === undefined || (nodefs.stream_ops as Record<symbol, unknown>)[kept]) return
  const streamOps = nodefs.stream_ops
  const nodeOps = nodefs.node_ops
  const { llseek, write, setattr, open } = streamOps
  const setNodeAttributes = nodeOps.setattr

  streamOps.llseek = (stream, offset, whence) => {
    const node = stream.node
    if (whence !== SEEK_END || !fs.isFile(node.mode)) return llseek(stream, offset, whence)
    // Read once with the file system's own seek (an fstat), then from memory.
    if (node.knownSize === undefined) node.knownSize = llseek(stream, 0, SEEK_END)
    return llseek(stream, offset + node.knownSize, 0)
  }
  streamOps.write = (stream, buffer, offset, length, position, canOwn) => {
    const written = write(stream, buffer, offset, length, position, canOwn)
    const node = stream.node
    if (node.knownSize !== undefined) {
      node.knownSize = typeof position === "number"
        ? Math.max(node.knownSize, position + written)
        : undefined
    }
    return written
  }
  streamOps.setattr = (stream, attributes) => {
    stream.node.knownSize = undefined
    setattr(stream, attributes)
  }
  streamOps.open = (stream) => {
    stream.node.knownSize = undefined
    open(stream)
  }
  nodeOps.setattr = (node, attributes) => {
    node.knownSize = undefined
    setNodeAttributes(node, attributes)
  }
  ;(streamOps as Record<symbol, unknown>)[kept] = true
}
