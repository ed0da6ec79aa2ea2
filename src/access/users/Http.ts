import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { Unauthorized } from "../../contract/Errors.ts"
import { ClientAddress } from "../ClientAddress.ts"
import { Invitations } from "./Invitations.ts"
import { InvitationList, type TokenPair, UserList } from "./Model.ts"
import { Oidc } from "./Oidc.ts"
import { clearRefreshCookie, cookieToken, deliver, markOidcForApp, takeOidcMarker, wantsCookie } from "./RefreshCookie.ts"
import { Users } from "./Users.ts"

export const AuthHttpLive = HttpApiBuilder.group(CairnApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const invitations = yield* Invitations
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
      .handle("changePassword", ({ payload, request }) =>
        Effect.gen(function*() {
          const caller = yield* Principal
          const family = yield* users.familyOf(request.headers["authorization"])
          const pair = yield* invitations.changePassword(caller, family, payload, addressOf(request))
          return yield* deliver(request, pair)
        }))
      .handle("invitation", ({ path }) => invitations.offer(path.token))
      .handle("acceptInvitation", ({ path, payload, request }) =>
        Effect.flatMap(invitations.accept(path.token, payload, addressOf(request)), (pair) =>
          deliver(request, pair)))
      .handle("oidcStart", ({ urlParams, request }) =>
        Effect.map(
          Effect.zipLeft(oidc.start, urlParams.app === "1" ? markOidcForApp(request) : Effect.void),
          // A redirect, answered as is (the declared success only documents it).
          (location) =>
            HttpServerResponse.redirect(location, { status: 302 }) as unknown as void
        ))
      .handle("oidcCallback", ({ urlParams, request }) =>
        Effect.gen(function*() {
          const pair = yield* oidc.callback(urlParams)
          if (!(yield* takeOidcMarker(request))) {
            return pair
          }
          // The web app started this sign-in: the refresh token goes into its cookie and the
          // browser back to the app, which signs in silently with it.
          yield* deliver(request, pair, true)
          return HttpServerResponse.redirect("/", { status: 302 }) as unknown as TokenPair
        }))
  }))

export const UsersHttpLive = HttpApiBuilder.group(CairnApi, "users", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const invitations = yield* Invitations
    return handlers
      .handle("list", () => Effect.map(users.list, (list) => new UserList({ users: list })))
      .handle("resetLink", ({ path, payload }) =>
        Effect.flatMap(Principal, (caller) => invitations.resetLink(caller, path.id, payload.expires_in_hours)))
      .handle("invitations", () =>
        Effect.map(invitations.list, (list) => new InvitationList({ invitations: list })))
      .handle("invite", ({ payload }) => Effect.flatMap(Principal, (caller) => invitations.invite(caller, payload)))
      .handle("withdrawInvitation", ({ path }) => invitations.withdraw(path.id))
      .handle("create", ({ payload }) => Effect.flatMap(Principal, (caller) => users.create(caller, payload)))
      .handle("update", ({ path, payload }) => Effect.flatMap(Principal, (caller) => users.update(caller, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (caller) => users.remove(caller, path.id)))
  }))
