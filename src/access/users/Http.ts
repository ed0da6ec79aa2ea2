import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { Unauthorized } from "../../contract/Errors.ts"
import { ClientAddress } from "../ClientAddress.ts"
import { type TokenPair, UserList } from "./Model.ts"
import { Oidc } from "./Oidc.ts"
import { clearRefreshCookie, cookieToken, deliver, markOidcForApp, takeOidcMarker, wantsCookie } from "./RefreshCookie.ts"
import { Users } from "./Users.ts"

export const AuthHttpLive = HttpApiBuilder.group(CairnApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const oidc = yield* Oidc
    const addressOf = (yield* ClientAddress).of
    return handlers
      .handle("status", () => users.status)
      .handle("setup", ({ payload, request }) =>
        Effect.flatMap(users.setup(payload, request.headers["authorization"], addressOf(request)), (pair) =>
          deliver(request, pair)))
      .handle("login", ({ payload, request }) =>
        Effect.flatMap(users.login(payload.username, payload.password, addressOf(request)), (pair) =>
          deliver(request, pair)))
      .handle("refresh", ({ payload, request }) => {
        const token = payload.refresh_token ?? cookieToken(request)
        if (token === undefined) {
          return Effect.fail(new Unauthorized({ detail: "Invalid or expired refresh token" }))
        }
        // A refused cookie is dropped, so the app stops presenting it and shows the sign-in page.
        return users.refresh(token).pipe(
          Effect.tapError(() => (payload.refresh_token === undefined ? clearRefreshCookie(request) : Effect.void)),
          Effect.flatMap((pair) =>
            deliver(request, pair)
          )
        )
      })
      .handle("logout", ({ payload, request }) =>
        Effect.zipRight(
          users.logout(payload.refresh_token, payload.everywhere, request.headers["authorization"]),
          wantsCookie(request) ? clearRefreshCookie(request) : Effect.void
        ))
      .handle("me", () =>
        Effect.flatMap(Principal, users.me))
      .handle("oidcStart", ({ urlParams, request }) =>
        Effect.map(
          Effect.zipLeft(oidc.start, urlParams.app === "1" ? markOidcForApp(request) : Effect.void),
          // A redirect, answered as is (the declared success only documents it).
          (location) => HttpServerResponse.redirect(location, { status: 302 }) as unknown as void
        ))
      .handle("oidcCallback", ({ urlParams, request }) =>
        Effect.gen(function*() {
          const pair = yield* oidc.callback(urlParams)
          if (!(yield* takeOidcMarker(request))) return pair
          // The web app started this sign-in: the refresh token goes into its cookie and the
          // browser back to the app, which signs in silently with it.
          yield* deliver(request, pair, true)
          return HttpServerResponse.redirect("/", { status: 302 }) as unknown as TokenPair
        }))
  }))

export const UsersHttpLive = HttpApiBuilder.group(CairnApi, "users", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    return handlers
      .handle("list", () => Effect.map(users.list, (list) => new UserList({ users: list })))
      .handle("create", ({ payload }) => Effect.flatMap(Principal, (caller) => users.create(caller, payload)))
      .handle("update", ({ path, payload }) => Effect.flatMap(Principal, (caller) => users.update(caller, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (caller) => users.remove(caller, path.id)))
  }))
