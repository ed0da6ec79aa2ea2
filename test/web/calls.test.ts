/**
 * The one mapping from Schema issues to words that every form of the web app uses: a value the
 * client refuses before sending, and a 422 from the server, both read as sentences per field.
 */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CreateUser } from "../../src/access/users/Model.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { EnsureChannel } from "../../src/channels/Model.ts"
import { describeError, fieldIssues, formErrors, issueInWords } from "../../src/web/shared/calls.ts"

const refusal = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => {
  const result = Schema.decodeUnknownEither(schema)(value)
  if (Either.isRight(result)) throw new Error("the value was accepted")
  return result.left
}

describe("form errors in words", () => {
  it("says a short password in a sentence next to its field, with no schema tree", () => {
    const error = refusal(CreateUser, { username: "root", password: "short" })
    const { byField, other } = formErrors(error, ["username", "password"])
    expect(byField).toEqual({ password: "Password must be at least 8 characters." })
    expect(other).toBeUndefined()
    expect(describeError(error)).toBe("Password must be at least 8 characters.")
  })

  it("names the field of a bad bot id and of a blank channel name", () => {
    expect(describeError(refusal(CreateBot, { id: "Bad Id", name: "x" }))).toMatch(/^Bot ids are 1-64 characters/)
    const blank = formErrors(refusal(EnsureChannel, { client_id: "web:1", bot_id: "default", name: "   " }), ["name"])
    expect(blank.byField.name).toBe("Name must not be blank.")
    for (const text of [describeError(refusal(CreateBot, { id: "Bad Id", name: "x" })), blank.byField.name!]) {
      expect(text).not.toMatch(/Expected|└|├|Encoded side/)
    }
  })

  it("reads the server's 422 issues by their loc", () => {
    const unprocessable = {
      detail: [{ loc: ["body", "title"], msg: "Expected a string at most 200 character(s) long, actual \"…\"", type: "value_error" }]
    }
    expect(fieldIssues(unprocessable)).toEqual([{ field: "title", message: "must be at most 200 characters long" }])
    expect(describeError(unprocessable)).toBe("Title must be at most 200 characters long.")
    // Issues about fields the form does not show go to its one error line.
    expect(formErrors(unprocessable, ["name"])).toEqual({ byField: {}, other: "Title must be at most 200 characters long." })
  })

  it("turns the usual schema messages into words", () => {
    expect(issueInWords("is missing")).toBe("is required")
    expect(issueInWords("Expected a string at least 3 character(s) long, actual \"a\"")).toBe("must be at least 3 characters long")
    expect(issueInWords("Expected an integer, actual 1.5")).toBe("must be a whole number")
    expect(issueInWords("Expected a UUID, actual \"x\"")).toBe("must be a UUID")
  })

  it("keeps a plain failure's detail or message", () => {
    expect(describeError({ detail: "Bot not found" })).toBe("Bot not found")
    expect(describeError(new Error("Network down"))).toBe("Network down")
  })
})
