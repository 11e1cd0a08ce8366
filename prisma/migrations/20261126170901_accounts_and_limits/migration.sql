-- CreateEnum
CREATE TYPE "user_role" AS ENUM ('admin', 'user');

-- AlterTable (edited by hand: is_admin becomes the role before it is dropped)
ALTER TABLE "users" ADD COLUMN     "disabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "role" "user_role" NOT NULL DEFAULT 'user',
ADD COLUMN     "token_version" INTEGER NOT NULL DEFAULT 1;
UPDATE "users" SET "role" = 'admin' WHERE "is_admin";
ALTER TABLE "users" DROP COLUMN "is_admin";

-- CreateTable
CREATE TABLE "api_keys" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "role" "user_role" NOT NULL,
    "secret_hash" VARCHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_sessions" (
    "session_id" VARCHAR(128) NOT NULL,
    "user_id" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_sessions_pkey" PRIMARY KEY ("session_id")
);

-- CreateIndex
CREATE INDEX "api_keys_user_id_idx" ON "api_keys"("user_id");

-- CreateIndex
CREATE INDEX "chat_sessions_user_id_idx" ON "chat_sessions"("user_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chat_sessions" ADD CONSTRAINT "chat_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Sessions written before sessions had owners belong to the first admin (edited by hand), so no
-- other user can take them over by writing to them first.
INSERT INTO "chat_sessions" ("session_id", "user_id")
SELECT DISTINCT m."session_id", a."id"
FROM "chat_messages" m CROSS JOIN (SELECT "id" FROM "users" WHERE "role" = 'admin' ORDER BY "id" LIMIT 1) a
ON CONFLICT DO NOTHING;
