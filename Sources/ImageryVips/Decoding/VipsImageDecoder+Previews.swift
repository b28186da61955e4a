import Foundation
import Imagery

/// Previews of progressive JPEGs while they download (`ImagePipeline.ProgressivePreviews`): the
/// scans counted by ``JPEGScanCounter``, decoded as the whole image would be (the same size,
/// orientation and recipe) with damage allowed, since the data is cut short on purpose: libjpeg
/// meets the end of the data where the next scan would begin and decodes the scans so far. A
/// thumbnail goes through `CJPEG`'s prefix decode (`imagery_jpeg_decode_prefix`), which skips the
/// scans its scale never reads, as the whole image's decode does; block smoothing fills in the
/// coefficients not yet sent where nothing is skipped.
///
/// Interlaced PNG and GIF give no previews: libvips reads neither usefully from a cut file. Its PNG
/// loader refuses an interlaced PNG cut short ("not enough data"), whatever `fail_on` says; its GIF
/// loader decodes an interlaced GIF cut short with the rows of the passes still to come left blank
/// (measured: 203 of 300 rows after a third of the file), where browsers spread each pass over the
/// rows it stands for.
extension VipsImageDecoder: ProgressiveDecoding {
    public func makeScanCounter() -> any ScanCounting {
        JPEGScanCounter()
    }

    public func decodePreview(_ data: Data, recipe: ImageRecipe) throws -> Image {
        var lenient = self
        lenient.rejectsCorruptData = false
        // A thumbnail through `CJPEG`'s prefix decode: the scans the decode scale never reads are
        // skipped, as for the whole image (at 1/8, every luma AC scan).
        guard try started(data).format == .jpeg else { return try lenient.decode(data, recipe: recipe) }
        return try lenient.decodeKeepingBase(data, recipe: recipe, prefix: true).image
    }
}
