import { AppError } from "../../protocol/errors";

type Code = "invalid_typed_data" | "invalid_signed_message" | "invalid_signature";

/** A refused signed request: 400 for a malformed, stale or misdirected one, 401 for a signature that does not prove its address. */
export class SignedRequestError extends AppError {
  constructor(code: Code, message: string) {
    if (code === "invalid_signature") super(401, code, message);
    else super(400, code, message);
    this.name = "SignedRequestError";
  }
}
