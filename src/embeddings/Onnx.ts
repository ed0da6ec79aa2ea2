/**
 * A sentence encoder run in process with ONNX Runtime (WebAssembly build: no native binary, no
 * download at install). EMBEDDING_MODEL `onnx/<name>` fetches `<EMBEDDING_LOCAL_URL>/onnx/model.onnx`
 * and `<EMBEDDING_LOCAL_URL>/vocab.txt` into DATA_DIR/models/<name> at first start (the default
 * URL is all-MiniLM-L6-v2, 384 dimensions, about 90 MB), then works offline.
 *
 * The model takes BERT inputs (input_ids, attention_mask, token_type_ids; whichever it declares)
 * and answers token states [batch, tokens, dimension]; the text vector is their mean over the real
 * tokens, unit length, as sentence-transformers does.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ort from "onnxruntime-web"
import { inSpan } from "../telemetry/Spans.ts"
import { downloadOnce } from "./Download.ts"
import { type EmbedderShape, EmbeddingError } from "./Embedder.ts"
import { normalize } from "./Vector.ts"
import { encode, parseVocab, type WordPieceVocab } from "./WordPiece.ts"

/** Tokens per text, [CLS] and [SEP] included; MiniLM was trained on 256. */
export const MAX_TOKENS = 256
/** Texts per inference run: bounds the padded batch's memory. */
const RUN_BATCH = 16

export interface OnnxModel {
  readonly session: ort.InferenceSession
  readonly vocab: WordPieceVocab
}

export const modelFiles = (dataDir: string, name: string) => {
  const dir = path.resolve(dataDir, "models", name)
  return { dir, model: path.join(dir, "model.onnx"), vocab: path.join(dir, "vocab.txt") }
}

/** Downloads what is missing, then loads the model. */
export const load = (options: { readonly dataDir: string; readonly name: string; readonly url: string }) =>
  Effect.gen(function*() {
    const files = modelFiles(options.dataDir, options.name)
    yield* downloadOnce(`${options.url}/vocab.txt`, files.vocab)
    yield* downloadOnce(`${options.url}/onnx/model.onnx`, files.model)
    return yield* Effect.tryPromise({
      try: async (): Promise<OnnxModel> => {
        // One thread: worker threads of the WebAssembly build do not fit a server process.
        ort.env.wasm.numThreads = 1
        const vocab = parseVocab(fs.readFileSync(files.vocab, "utf8"))
        const session = await ort.InferenceSession.create(new Uint8Array(fs.readFileSync(files.model)))
        return { session, vocab }
      },
      catch: (cause) =>
        new EmbeddingError({
          message: `Cannot load the ONNX model in ${files.dir}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })
  })

const int64 = (rows: ReadonlyArray<ReadonlyArray<number>>, width: number, fill: (row: number, col: number) => number) => {
  const data = new BigInt64Array(rows.length * width)
  for (let r = 0; r < rows.length; r++) for (let c = 0; c < width; c++) data[r * width + c] = BigInt(fill(r, c))
  return new ort.Tensor("int64", data, [rows.length, width])
}

export const embedBatch = async (model: OnnxModel, texts: ReadonlyArray<string>): Promise<Array<Array<number>>> => {
  const ids = texts.map((text) => encode(model.vocab, text, MAX_TOKENS))
  const width = Math.max(...ids.map((row) => row.length))
  const inputs: Record<string, ort.Tensor> = {}
  const available: Record<string, () => ort.Tensor> = {
    input_ids: () => int64(ids, width, (r, c) => ids[r]![c] ?? model.vocab.pad),
    attention_mask: () => int64(ids, width, (r, c) => (c < ids[r]!.length ? 1 : 0)),
    token_type_ids: () => int64(ids, width, () => 0)
  }
  for (const name of model.session.inputNames) {
    const make = available[name]
    if (!make) throw new Error(`The model wants an input this encoder does not provide: ${name}`)
    inputs[name] = make()
  }
  const outputs = await model.session.run(inputs)
  const states = outputs[model.session.outputNames[0]!]!
  const [, tokens, dimension] = states.dims as ReadonlyArray<number>
  const data = states.data as Float32Array
  return ids.map((row, r) => {
    const sum = new Array<number>(dimension!).fill(0)
    for (let t = 0; t < row.length; t++) {
      const offset = (r * tokens! + t) * dimension!
      for (let i = 0; i < dimension!; i++) sum[i]! += data[offset + i]!
    }
    return normalize(sum.map((value) => value / row.length))
  })
}

export const make = (name: string, model: OnnxModel): EmbedderShape => ({
  model: `onnx/${name}`,
  embed: (texts) =>
    inSpan(
      Effect.tryPromise({
        try: async () => {
          const out: Array<Array<number>> = []
          for (let i = 0; i < texts.length; i += RUN_BATCH) out.push(...(await embedBatch(model, texts.slice(i, i + RUN_BATCH))))
          return out
        },
        catch: (cause) =>
          new EmbeddingError({ message: `ONNX inference failed: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
      }),
      "Embedder.onnx",
      { attributes: { texts: texts.length } }
    )
})
