-- AlterEnum
ALTER TYPE "feed_status" ADD VALUE 'retrying';
