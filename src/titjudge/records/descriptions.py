"""One line of a descriptions file (`DescriptionLine`): written by the synthetic benchmark,
read by the replay describer. Kept low so the data package writes it without importing the
models."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from titjudge.errors import DataError
from titjudge.user_files import read_user_file


class DescriptionLine(BaseModel):
    """One line of a descriptions file: the image (its sha256, or a path relative to the
    file) and its description. Written by the synthetic benchmark, read by the replay."""

    model_config = ConfigDict(extra="ignore")

    item_id: str | None = None
    image: str | None = None
    image_sha256: str | None = None
    description: str

    @model_validator(mode="before")
    @classmethod
    def _needs_description_and_image(cls, obj: Any) -> Any:
        description = obj.get("description") if isinstance(obj, dict) else None
        if not isinstance(description, str) or not description.strip():
            raise ValueError("missing 'description'")
        if not (obj.get("image_sha256") or obj.get("image")):
            raise ValueError("needs 'image_sha256' or 'image'")
        return obj

    def digest(self, folder: Path, loc: str) -> str:
        """The image's sha256: as written, or hashed from the image file next to the file."""
        if self.image_sha256:
            return self.image_sha256
        image = folder / str(self.image)
        try:
            data = read_user_file(image, "image")  # a regular file, read within its bound
        except DataError as exc:
            why = str(exc).removeprefix(f"{image}: ").removeprefix("image ").removeprefix("file ")
            raise DataError(f"{loc}: image {self.image!r} {why}") from None
        return hashlib.sha256(data).hexdigest()
