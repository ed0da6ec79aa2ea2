import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Carapaces } from "./Carapaces.ts"
import { CarapaceConflict } from "./Errors.ts"
import { CarapaceList } from "./Model.ts"

export const CarapacesHttpLive = HttpApiBuilder.group(CairnApi, "carapaces", (handlers) =>
  Effect.gen(function*() {
    const carapaces = yield* Carapaces
    return handlers
      .handle("list", () => carapaces.list.pipe(Effect.map((list) => new CarapaceList({ carapaces: list }))))
      .handle("get", ({ path }) => carapaces.get(path.id))
      .handle("resolved", ({ path }) =>
        carapaces.get(path.id).pipe(
          Effect.zipRight(carapaces.resolve([path.id])),
          // Only carapace files can hold a cycle (the API refuses one); reading it is a conflict.
          Effect.catchTag("CarapaceCycle", (cycle) => Effect.fail(new CarapaceConflict({ detail: cycle.message })))
        ))
      .handle("create", ({ payload }) => carapaces.create(payload))
      .handle("update", ({ path, payload }) => carapaces.update(path.id, payload))
      .handle("delete", ({ path }) => carapaces.remove(path.id))
      .handle("channelGet", ({ path }) => carapaces.channelCarapaces(path.id))
      .handle("channelSet", ({ path, payload }) => carapaces.setChannelCarapaces(path.id, payload.carapaces))
  }))
