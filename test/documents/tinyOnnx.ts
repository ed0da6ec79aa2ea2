/**
 * A tiny sentence encoder built in the test, in real ONNX format: a vocabulary and one Gather node
 * that looks each token up in an embedding table, answering [batch, tokens, dimension] exactly as
 * a BERT export's `last_hidden_state`. The encoder code under test does the rest (tokenizing,
 * pooling, normalising), so nothing is downloaded from outside.
 *
 * The protobuf writer covers only the fields this model needs (onnx.proto3 field numbers).
 */

const varint = (value: number | bigint): Array<number> => {
  let v = BigInt(value)
  const out: Array<number> = []
  do {
    let byte = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) byte |= 0x80
    out.push(byte)
  } while (v > 0n)
  return out
}

type Field = Array<number>
const key = (field: number, wire: number) => varint((field << 3) | wire)
const int = (field: number, value: number): Field => [...key(field, 0), ...varint(value)]
const bytes = (field: number, value: Uint8Array | Array<number>): Field => [...key(field, 2), ...varint(value.length), ...value]
const str = (field: number, value: string): Field => bytes(field, [...new TextEncoder().encode(value)])
const msg = (field: number, ...fields: Array<Field>): Field => bytes(field, fields.flat())

const FLOAT = 1
const INT64 = 7

const dim = (d: number | string): Field => (typeof d === "number" ? msg(1, int(1, d)) : msg(1, str(2, d)))
const valueInfo = (field: number, name: string, elemType: number, dims: ReadonlyArray<number | string>): Field =>
  msg(field, str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...dims.map(dim)))))

/** A vocabulary of special tokens and `words`; each word's row of `vectors` is its embedding. */
export const buildTinyEncoder = (words: ReadonlyArray<string>, vectors: ReadonlyArray<ReadonlyArray<number>>) => {
  const tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ...words]
  const dimension = vectors[0]!.length
  // Special tokens get small distinct rows so pooling them in does not swamp the words.
  const rows = tokens.map((
    _,
    i
  ) => (i < 5 ? Array.from({ length: dimension }, (_, j) => (j === i % dimension ? 0.01 : 0)) : vectors[i - 5]!))
  const table = new Float32Array(rows.flat())
  const graph = [
    msg(
      1,
      str(1, "table"),
      str(1, "input_ids"),
      str(2, "last_hidden_state"),
      str(3, "lookup"),
      str(4, "Gather"),
      msg(5, str(1, "axis"), int(3, 0), int(20, 2))
    ),
    str(2, "tiny-encoder"),
    msg(5, int(1, tokens.length), int(1, dimension), int(2, FLOAT), str(8, "table"), bytes(9, new Uint8Array(table.buffer))),
    valueInfo(11, "input_ids", INT64, ["batch", "sequence"]),
    valueInfo(11, "attention_mask", INT64, ["batch", "sequence"]),
    valueInfo(12, "last_hidden_state", FLOAT, ["batch", "sequence", dimension])
  ]
  const model = [...int(1, 8), ...str(2, "cairn-test"), ...msg(7, ...graph), ...msg(8, str(1, ""), int(2, 13))]
  return { model: new Uint8Array(model), vocab: tokens.join("\n") + "\n" }
}
