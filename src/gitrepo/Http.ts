import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { GitRepository } from "./GitRepository.ts"

export const RepositoryHttpLive = HttpApiBuilder.group(CairnApi, "repository", (handlers) =>
  Effect.gen(function*() {
    const repository = yield* GitRepository
    return handlers
      .handle("status", ({ urlParams }) => repository.status(urlParams.limit ?? 50))
      .handle("pull", () =>
        Effect.flatMap(Principal, (principal) => repository.pull(principal.id ? `${principal.kind}:${principal.id}` : principal.kind)))
  }))
